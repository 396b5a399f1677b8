// Numbers given as text or fields are compared with their range before any narrowing,
// and every refusal has the same words: "NAME: bad value 'TEXT' (an integer in [LO, HI])".
#include "common/bounded_number.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr IntRange kWindow{1, 10000};

std::string IntRefusal(const std::string& text, IntRange range = kWindow) {
  const absl::StatusOr<int64_t> v = ParseIntIn("--straggler-window", text, range);
  EXPECT_FALSE(v.ok()) << text << " was accepted as " << (v.ok() ? *v : 0);
  EXPECT_TRUE(v.ok() || absl::IsInvalidArgument(v.status()));
  return v.ok() ? "" : std::string(v.status().message());
}

TEST(BoundedNumber, AValuePastInt32IsOutOfRangeNotWrapped) {
  // The example: 2147483648 was narrowed to a negative int.
  EXPECT_EQ(IntRefusal("2147483648"), "--straggler-window: bad value '2147483648' (an integer in [1, 10000])");
  EXPECT_THAT(IntRefusal("2147483647"), HasSubstr("an integer in [1, 10000]"));
  EXPECT_THAT(IntRefusal("4294967297"), HasSubstr("bad value '4294967297'"));  // 2^32 + 1 would wrap to 1
}

TEST(BoundedNumber, EveryKindOfBadIntegerIsRefusedAlike) {
  for (const char* text : {"0", "10001", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
                           "99999999999999999999999", "abc", "", " 5", "5 ", "0x10", "1e3", "5.0", "nan", "inf",
                           "+-5", "--5", "1e400", "٣"}) {
    EXPECT_THAT(IntRefusal(text), HasSubstr("(an integer in [1, 10000])")) << text;
  }
  EXPECT_EQ(*ParseIntIn("--n", "10000", kWindow), 10000);
  EXPECT_EQ(*ParseIntIn("--n", "+7", kWindow), 7);
  EXPECT_EQ(*ParseIntIn("--n", "010", kWindow), 10);  // decimal, never octal
  const IntRange full{INT64_MIN, INT64_MAX};
  EXPECT_EQ(*ParseIntIn("--n", "-9223372036854775808", full), INT64_MIN);
  EXPECT_EQ(*ParseIntIn("--n", "9223372036854775807", full), INT64_MAX);
}

TEST(BoundedNumber, RealsMustBeFiniteAndInside) {
  const RealRange seconds{0.1, 300};
  for (const char* text : {"inf", "-inf", "nan", "NaN", "1e400", "-1e400", "1e-9", "0", "301", "abc", "", "0x1p3",
                           "1,5", " 1"}) {
    const absl::StatusOr<double> v = ParseRealIn("--poll-seconds", text, seconds);
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_THAT(v.status().message(), HasSubstr("--poll-seconds: bad value '")) << text;
    EXPECT_THAT(v.status().message(), HasSubstr("(a number in [0.1, 300])")) << text;
  }
  EXPECT_DOUBLE_EQ(*ParseRealIn("--poll-seconds", "2.5", seconds), 2.5);
  EXPECT_DOUBLE_EQ(*ParseRealIn("--poll-seconds", "3e2", seconds), 300);
  const RealRange open{0, 1, /*lo_open=*/true, /*hi_open=*/true};
  EXPECT_FALSE(ParseRealIn("--f", "0", open).ok());
  EXPECT_FALSE(ParseRealIn("--f", "1", open).ok());
  EXPECT_THAT(ParseRealIn("--f", "1", open).status().message(), HasSubstr("(a number in (0, 1))"));
}

TEST(BoundedNumber, SeedsAreAnyUint64AndNeverANegativeWrapped) {
  EXPECT_EQ(*ParseSeed("--seed", "18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(*ParseSeed("--seed", "0"), 0u);
  for (const char* text : {"-1", "18446744073709551616", "+1", "1.0", "", "0x1"}) {
    const absl::StatusOr<uint64_t> v = ParseSeed("--seed", text);
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_THAT(v.status().message(), HasSubstr("(an integer in [0, 18446744073709551615])")) << text;
  }
}

TEST(BoundedNumber, TypedValuesAreRefusedInTheSameWords) {
  EXPECT_EQ(CheckIntIn("rollout.steps", 0, {1, 1000000}).message(),
            "rollout.steps: bad value '0' (an integer in [1, 1000000])");
  EXPECT_TRUE(CheckIntIn("rollout.steps", 1000000, {1, 1000000}).ok());
  EXPECT_FALSE(CheckRealIn("x", std::numeric_limits<double>::quiet_NaN(), {0, 1}).ok());
  EXPECT_FALSE(CheckRealIn("x", std::numeric_limits<double>::infinity(), {0, 1e308}).ok());
}

TEST(BoundedNumber, AHostileValueIsQuotedShortAndPrintable) {
  const std::string huge(100000, '7');
  const std::string message = IntRefusal(huge);
  EXPECT_LT(message.size(), 200u);
  EXPECT_THAT(message, HasSubstr("(100000 characters)"));
  const std::string control = IntRefusal("5\x1b[2J\xff");
  EXPECT_THAT(control, HasSubstr("5\\e[2J\\xff"));
  EXPECT_EQ(control.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gantry
