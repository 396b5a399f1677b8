#include "worker/flow/strouhal.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gantry::flow {
namespace {

// A sampled sine of known frequency plus an offset: the zero-crossing estimate must
// recover it far better than an FFT bin (1 / record length = 1/3000 here, 12 % of f).
TEST(Strouhal, RecoversTheFrequencyOfASampledSine) {
  const double period = 437.3, every = 20;
  std::vector<double> signal;
  for (int k = 0; k < 150; ++k) signal.push_back(0.003 + 0.02 * std::sin(2 * M_PI * (k * every) / period + 0.4));
  const StrouhalEstimate e = MeasureStrouhal(signal, every, 8, 0.1);
  ASSERT_TRUE(e.found) << e.why_not;
  EXPECT_NEAR(e.frequency * period, 1.0, 2e-3);
  EXPECT_NEAR(e.strouhal, 8 / (period * 0.1), 1e-3);
  EXPECT_EQ(e.periods, 5);  // 6.9 periods recorded; whole ones between the first and last upward crossing
}

TEST(Strouhal, SaysWhyWhenThereIsNoPeriod) {
  EXPECT_FALSE(MeasureStrouhal(std::vector<double>(100, 0.0), 10, 8, 0.1).found);
  std::vector<double> half;
  for (int k = 0; k < 50; ++k) half.push_back(std::sin(M_PI * k / 50.0));
  const StrouhalEstimate e = MeasureStrouhal(half, 10, 8, 0.1);
  EXPECT_FALSE(e.found);
  EXPECT_FALSE(e.why_not.empty());
}

}  // namespace
}  // namespace gantry::flow
