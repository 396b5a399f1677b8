#include "common/timing_summary.h"

#include "common/clock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(Percentile, InterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(Percentile({10, 20}, 0.99), 19.9);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0.0);
}

TEST(SteadyStateMean, DropsRampUpAndRampDown) {
  std::vector<double> steps(20, 1.0);
  steps[0] = steps[1] = 100.0;    // ramp-up: first 10 %
  steps[18] = steps[19] = 50.0;   // ramp-down: last 10 %
  EXPECT_DOUBLE_EQ(SteadyStateMean(steps, 0.1), 1.0);
}

TEST(SteadyStateMean, KeepsAtLeastOneStep) {
  EXPECT_DOUBLE_EQ(SteadyStateMean({7.0}, 0.5), 7.0);
  EXPECT_DOUBLE_EQ(SteadyStateMean({1.0, 3.0}, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(SteadyStateMean({}, 0.1), 0.0);
}

TEST(FakeClock, MovesOnlyWhenTold) {
  FakeClock clock(1000);
  EXPECT_EQ(clock.NowNanos(), 1000);
  clock.AdvanceMillis(2.5);
  EXPECT_EQ(clock.NowNanos(), 1000 + 2'500'000);
  EXPECT_GT(Clock::Real().NowNanos(), 0);
}

}  // namespace
}  // namespace gantry
