#include "coordinator/service/token_auth.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

TEST(TokenAuth, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), "a"));
}

TEST(TokenAuth, OnlyTheBearerTokenPasses) {
  const TokenAuth auth("0123456789abcdef0123");
  EXPECT_TRUE(auth.Check("Bearer 0123456789abcdef0123").ok());
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check(std::nullopt)));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check("")));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check("0123456789abcdef0123")));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check("Basic 0123456789abcdef0123")));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check("Bearer 0123456789abcdef012")));
  EXPECT_TRUE(absl::IsUnauthenticated(auth.Check("Bearer 0123456789abcdef01234")));
}

TEST(TokenAuth, FromFileTrimsAndRefusesShortTokens) {
  const std::string dir = testing::MakeTempDir("token");
  std::ofstream(dir + "/good") << "  0123456789abcdef0123\n";
  std::ofstream(dir + "/short") << "secret\n";
  absl::StatusOr<TokenAuth> good = TokenAuth::FromFile(dir + "/good");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(good->Check("Bearer 0123456789abcdef0123").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(TokenAuth::FromFile(dir + "/short").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(TokenAuth::FromFile(dir + "/missing").status()));
}

TEST(TokenAuth, FromFileTrimsACarriageReturnAndRefusesControlCharacters) {
  const std::string dir = testing::MakeTempDir("token_control");
  std::ofstream(dir + "/crlf", std::ios::binary) << "0123456789abcdef0123\r\n";
  absl::StatusOr<TokenAuth> crlf = TokenAuth::FromFile(dir + "/crlf");
  ASSERT_TRUE(crlf.ok()) << crlf.status();
  EXPECT_TRUE(crlf->Check("Bearer 0123456789abcdef0123").ok());
  // No client could send this token (gRPC refuses it in a header): refused at start-up.
  std::ofstream(dir + "/bell", std::ios::binary) << "0123456789\x07" "abcdef0123\n";
  const absl::Status bell = TokenAuth::FromFile(dir + "/bell").status();
  EXPECT_TRUE(absl::IsInvalidArgument(bell));
  EXPECT_NE(std::string(bell.message()).find("--token-file " + dir + "/bell: the token holds a byte that is not "
                                             "printable ASCII (byte 0x07 at position 10"),
            std::string::npos)
      << bell.message();
}

}  // namespace
}  // namespace gantry
