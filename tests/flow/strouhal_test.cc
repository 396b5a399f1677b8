#include "worker/flow/strouhal.h"

#include <cmath>
#include <numbers>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::flow {
namespace {

using ::testing::HasSubstr;

std::vector<double> Sine(double cycles_per_sample, int n, double phase = 0.3, double mean = 2.0) {
  std::vector<double> s(n);
  for (int i = 0; i < n; ++i) s[i] = mean + std::sin(2 * std::numbers::pi * cycles_per_sample * i + phase);
  return s;
}

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

// The cases a rollout's probe signals bring (they were the DFT estimate's, which this
// one replaced): whole and fractional bins of a short record, and a Strouhal number in
// lattice units from frames `every` steps apart.
TEST(Strouhal, RecoversKnownFrequenciesOfShortRecordsAndTheirStrouhalNumber) {
  StrouhalEstimate e = MeasureStrouhal(Sine(0.05, 200), 1, 1, 1);
  ASSERT_TRUE(e.found) << e.why_not;
  EXPECT_NEAR(e.frequency, 0.05, 1e-4);
  for (double true_f : {0.0437, 0.0712, 0.1234}) {
    e = MeasureStrouhal(Sine(true_f, 300), 1, 1, 1);
    ASSERT_TRUE(e.found) << e.why_not;
    EXPECT_NEAR(e.frequency / true_f, 1.0, 0.01) << true_f;
  }
  // A cylinder of D = 20 in U = 0.05 shedding at St 0.17 has period D / (St U) = 2353
  // lattice steps; frames every 100 steps see f = 100 / 2353 cycles per frame.
  const double per_frame = 0.17 * 0.05 / 20 * 100;
  e = MeasureStrouhal(Sine(per_frame, 400), 100, 20, 0.05);
  ASSERT_TRUE(e.found) << e.why_not;
  EXPECT_NEAR(e.strouhal, 0.17, 0.17 * 0.01);
  // Under two periods, where a DFT peak cannot be told from the record's length.
  e = MeasureStrouhal(Sine(per_frame, 40, -1.5), 100, 20, 0.05);
  ASSERT_TRUE(e.found) << e.why_not;
  EXPECT_EQ(e.periods, 1);
  EXPECT_NEAR(e.strouhal, 0.17, 0.17 * 0.01);
}

TEST(Strouhal, TooShortFlatOrUnderAPeriodSignalsSayWhyAndTheFix) {
  EXPECT_THAT(MeasureStrouhal({1, 2, 3}, 1, 1, 1).why_not, HasSubstr("fewer than 4 samples: record more frames"));
  EXPECT_THAT(MeasureStrouhal(std::vector<double>(50, 1.0), 1, 1, 1).why_not, HasSubstr("does not oscillate"));
  EXPECT_THAT(MeasureStrouhal(Sine(0.01, 64), 1, 1, 1).why_not,
              HasSubstr("less than one whole shedding period in the signal"));
}

}  // namespace
}  // namespace gantry::flow
