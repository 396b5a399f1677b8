#include "common/printable_text.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(FindUnprintable, NamesTheFirstControlByteAndWhere) {
  EXPECT_FALSE(FindUnprintable("job one (batch 64)", true).found);
  EXPECT_FALSE(FindUnprintable("entraînement ✓", false).found);  // printable UTF-8
  const UnprintableByte esc = FindUnprintable("ok\x1b[2J", false);
  ASSERT_TRUE(esc.found);
  EXPECT_EQ(esc.position, 2u);
  EXPECT_EQ(esc.value, 0x1b);
  EXPECT_EQ(DescribeUnprintable(esc), "byte 0x1b at position 2");
  EXPECT_TRUE(FindUnprintable("a\nb", false).found);
  EXPECT_TRUE(FindUnprintable("a\x7f", false).found);                   // DEL
  EXPECT_TRUE(FindUnprintable("a\xc2\x9b" "31m", false).found);         // U+009B, the 8-bit CSI
  EXPECT_TRUE(FindUnprintable("a\xff", false).found);                   // not UTF-8
  EXPECT_TRUE(FindUnprintable("a\xc3", false).found);                   // cut short
  EXPECT_TRUE(FindUnprintable("\xed\xa0\x80", false).found);            // a surrogate
  EXPECT_TRUE(FindUnprintable("\xc0\xaf", false).found);                // overlong '/'
  EXPECT_TRUE(FindUnprintable(std::string("a\0b", 3), false).found);
  EXPECT_TRUE(FindUnprintable("entraînement", /*ascii_only=*/true).found);
}

// What a proto3 string cannot carry; controls are UTF-8 and pass.
TEST(FindInvalidUtf8, NamesTheFirstByteThatIsNotUtf8) {
  EXPECT_FALSE(FindInvalidUtf8("job-3 \x1b[0m Fréchet \xc2\x9b").found);
  for (const auto& [text, position] : std::vector<std::pair<std::string, size_t>>{
           {"job-\xff", 4}, {"ab\xc3", 2}, {"\xed\xa0\x80", 0}, {"x\xc0\xaf", 1}, {"\xf4\x90\x80\x80", 0}}) {
    const UnprintableByte bad = FindInvalidUtf8(text);
    EXPECT_TRUE(bad.found) << text;
    EXPECT_EQ(bad.position, position) << text;
  }
}

TEST(CleanToken, TrimsTheNewlineOfCatAndACarriageReturn) {
  EXPECT_EQ(*CleanToken("c0ffee0123456789\n", "--token"), "c0ffee0123456789");
  EXPECT_EQ(*CleanToken("c0ffee0123456789\r\n", "--token"), "c0ffee0123456789");
  EXPECT_EQ(*CleanToken("  c0ffee0123456789 \t\n\n", "--token"), "c0ffee0123456789");
}

TEST(CleanToken, RefusesAnyOtherControlOrNonAsciiByteByName) {
  const absl::StatusOr<std::string> control = CleanToken("c0ffee\x01" "0123456789", "GANTRY_TOKEN");
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(control.status().message(), HasSubstr("GANTRY_TOKEN: the token holds a byte that is not printable"));
  EXPECT_THAT(control.status().message(), HasSubstr("byte 0x01 at position 6"));
  EXPECT_THAT(control.status().message(), Not(HasSubstr("c0ffee")));  // the token is not echoed
  EXPECT_FALSE(CleanToken("tok\nen", "--token").ok());                 // an inner newline
  EXPECT_FALSE(CleanToken("tok\x7f", "--token").ok());
  EXPECT_FALSE(CleanToken("jeton-\xc3\xa9t\xc3\xa9", "--token").ok());  // UTF-8 is not a header value
  EXPECT_THAT(CleanToken("\n", "--token-file /x").status().message(), HasSubstr("--token-file /x: the token is empty"));
}

TEST(NameForMessage, EscapesAndCutsANameFromAFile) {
  EXPECT_EQ(NameForMessage("conv1.weight"), "conv1.weight");
  // A NUL shows, so two names that differ there do not print alike.
  EXPECT_EQ(NameForMessage(std::string("fc.bias\0x", 9)), "fc.bias\\x00x");
  EXPECT_EQ(NameForMessage(std::string(kMaxQuotedNameBytes, 'a')), std::string(kMaxQuotedNameBytes, 'a'));
  EXPECT_EQ(NameForMessage(std::string(50'000'000, 'a')),
            std::string(kMaxQuotedNameBytes, 'a') + "\u2026 (50000000 bytes)");
}

TEST(EscapeForTerminal, ShowsControlsAndEscapesButKeepsPrintableText) {
  EXPECT_EQ(EscapeForTerminal("plain name é"), "plain name é");
  EXPECT_EQ(EscapeForTerminal("a\nb\r\tc"), "a\\nb\\r\\tc");
  EXPECT_EQ(EscapeForTerminal("\x1b[31mred\x1b[0m"), "\\e[31mred\\e[0m");
  EXPECT_EQ(EscapeForTerminal("\x07\x7f\xff"), "\\x07\\x7f\\xff");
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
  EXPECT_EQ(EscapeForTerminal("back\\slash"), "back\\\\slash");  // so "\\n" typed is not "\n" shown
  EXPECT_FALSE(FindUnprintable(EscapeForTerminal("x\x1b\n\x9b\xc3"), false).found);
}

}  // namespace
}  // namespace gantry
