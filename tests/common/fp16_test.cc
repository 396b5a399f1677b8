#include "common/fp16.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace gantry {
namespace {

uint16_t Bits(float f) { return fp16::FromFloat(f).bits; }

TEST(Fp16Test, ExactValuesKeepTheirBits) {
  EXPECT_EQ(Bits(0.0f), 0x0000);
  EXPECT_EQ(Bits(-0.0f), 0x8000);
  EXPECT_EQ(Bits(1.0f), 0x3c00);
  EXPECT_EQ(Bits(-2.0f), 0xc000);
  EXPECT_EQ(Bits(65504.0f), 0x7bff);                   // largest finite half
  EXPECT_EQ(Bits(std::ldexp(1.0f, -14)), 0x0400);      // smallest normal
  EXPECT_EQ(Bits(std::ldexp(1.0f, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(Bits(std::ldexp(1023.0f, -24)), 0x03ff);   // largest subnormal
}

TEST(Fp16Test, RoundsToNearestEven) {
  const float ulp1 = std::ldexp(1.0f, -10);  // the half ulp spacing at 1.0
  EXPECT_EQ(fp16::FromFloat(1.0f + ulp1 / 2).ToFloat(), 1.0f);                  // tie -> even (down)
  EXPECT_EQ(fp16::FromFloat(1.0f + 3 * ulp1 / 2).ToFloat(), 1.0f + 2 * ulp1);   // tie -> even (up)
  EXPECT_EQ(fp16::FromFloat(std::nextafter(1.0f + ulp1 / 2, 2.0f)).ToFloat(), 1.0f + ulp1);
  // Subnormal range: ties between multiples of 2^-24.
  EXPECT_EQ(Bits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(Bits(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(Bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(Bits(std::ldexp(2047.0f, -25)), 0x0400);
}

TEST(Fp16Test, OverflowInfinityAndNan) {
  EXPECT_EQ(Bits(65519.0f), 0x7bff);  // below the midpoint to 65536
  EXPECT_EQ(Bits(65520.0f), 0x7c00);  // the tie rounds to even: Inf
  EXPECT_EQ(Bits(1e10f), 0x7c00);
  EXPECT_EQ(Bits(-1e10f), 0xfc00);
  EXPECT_EQ(Bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(fp16::FromFloat(std::numeric_limits<float>::quiet_NaN()).ToFloat()));
  EXPECT_TRUE(std::isinf(fp16::FromBits(0xfc00).ToFloat()));
  EXPECT_LT(fp16::FromBits(0xfc00).ToFloat(), 0.0f);
}

TEST(Fp16Test, EveryHalfRoundTrips) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const fp16 h = fp16::FromBits(static_cast<uint16_t>(b));
    const float f = h.ToFloat();
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp16::FromFloat(f).bits, b) << "bits " << b;
  }
}

// The compiler's own half-precision type: ARM's __fp16 on aarch64 (IEEE format; GCC 12
// offers _Float16 to C++ on x86 only), else _Float16 where the compiler has it.
#if defined(__aarch64__)
#define GANTRY_COMPILER_HALF __fp16
#elif defined(__FLT16_MAX__)
#define GANTRY_COMPILER_HALF _Float16
#endif

#ifdef GANTRY_COMPILER_HALF
// The compiler's own float -> half conversion (round to nearest even) over a sweep of
// float bit patterns covering every exponent.
TEST(Fp16Test, MatchesTheCompilersConversion) {
  using CompilerHalf = GANTRY_COMPILER_HALF;
  for (uint64_t u = 0; u < 0x100000000ull; u += 0x10001ull * 7) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue;
    const auto expected = std::bit_cast<uint16_t>(static_cast<CompilerHalf>(f));
    ASSERT_EQ(fp16::FromFloat(f).bits, expected) << "float bits " << u;
    ASSERT_EQ(fp16::FromBits(expected).ToFloat(), static_cast<float>(static_cast<CompilerHalf>(f)));
  }
}
#endif

}  // namespace
}  // namespace gantry
