#include "tests/testing/backend_compare.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gantry::testing {

void ExpectWithinBound(const Tensor& actual, const Tensor& expected, const Tensor& magnitude, double factor,
                       const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(magnitude.shape(), expected.shape()) << what;
  int64_t bad = 0, worst = -1;
  double worst_ratio = 0.0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double err = std::abs(static_cast<double>(actual.at(i)) - expected.at(i));
    const double allowed = factor * magnitude.at(i) + 1e-30;
    const double ratio = std::isnan(err) ? INFINITY : err / allowed;
    if (ratio > 1.0) ++bad;
    if (ratio > worst_ratio || worst < 0) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << actual.numel() << " elements off by more than "
                    << factor << " x magnitude; worst at " << worst << ": " << actual.at(worst) << " vs "
                    << expected.at(worst) << " (magnitude " << magnitude.at(worst) << ")";
}

double MaxRelativeGap(const Tensor& actual, const Tensor& expected, const Tensor& magnitude) {
  double gap = 0.0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    if (magnitude.at(i) <= 0.0f) continue;
    gap = std::max(gap, std::abs(static_cast<double>(actual.at(i)) - expected.at(i)) / magnitude.at(i));
  }
  return gap;
}

void ExpectRoundedOperands(const Tensor& fast, const Tensor& reference16, const Tensor& fp32,
                           const Tensor& magnitude) {
  const double to_reference = MaxRelativeGap(fast, reference16, magnitude);
  const double to_fp32 = MaxRelativeGap(fast, fp32, magnitude);
  EXPECT_GT(to_fp32, 10.0 * to_reference) << "no trace of 16-bit operands: " << to_fp32
                                          << " from fp32, " << to_reference << " from the 16-bit reference";
}

Tensor Abs(const Tensor& x) {
  Tensor y = x.Clone();
  for (int64_t i = 0; i < y.numel(); ++i) y.data()[i] = std::abs(y.data()[i]);
  return y;
}

}  // namespace gantry::testing
