#include "common/bf16.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(Bf16, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65536.0f}) {
    EXPECT_EQ(bf16::FromFloat(f).ToFloat(), f) << f;
  }
}

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 lies exactly between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
  EXPECT_EQ(bf16::FromFloat(1.0f + std::ldexp(1.0f, -8)).ToFloat(), 1.0f);
  // 1 + 3*2^-8 lies between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up to even.
  EXPECT_EQ(bf16::FromFloat(1.0f + 3 * std::ldexp(1.0f, -8)).ToFloat(), 1.0f + std::ldexp(1.0f, -6));
  // Just above the tie rounds up.
  EXPECT_EQ(bf16::FromFloat(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)).ToFloat(), 1.0f + std::ldexp(1.0f, -7));
}

TEST(Bf16, InfinityAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16::FromFloat(inf).ToFloat(), inf);
  EXPECT_EQ(bf16::FromFloat(-inf).ToFloat(), -inf);
  EXPECT_TRUE(std::isnan(bf16::FromFloat(std::nanf("")).ToFloat()));
  // A NaN whose payload sits only in the low 16 bits must not truncate to Inf.
  const float low_payload_nan = std::bit_cast<float>(0x7f800001u);
  EXPECT_TRUE(std::isnan(bf16::FromFloat(low_payload_nan).ToFloat()));
  // The largest finite float rounds up to Inf, as in IEEE round-to-nearest.
  EXPECT_EQ(bf16::FromFloat(std::numeric_limits<float>::max()).ToFloat(), inf);
}

}  // namespace
}  // namespace gantry
