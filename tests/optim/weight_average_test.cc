// The generator's weight average (--g-ema): the decay's ramp, the update over parameters
// and BatchNorm buffers against the formula in double precision, the swap that puts the
// average into the network and the live weights back, and a restore of the wrong size.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/linear.h"
#include "worker/optim/weight_average.h"

namespace gantry {
namespace {

std::vector<float> HostValues(const Tensor& t) { return {t.data(), t.data() + t.numel()}; }

void Fill(const Tensor& t, float base) {
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = base + 0.25f * static_cast<float>(i);
}

struct SmallNetwork {
  Linear linear{3, 2, /*bias=*/true};
  BatchNorm norm{2};
  Layer* layers[2] = {&linear, &norm};
  FlatParameters params{layers};
};

TEST(WeightAverage, TheDecayRampsUpToTheConfiguredOne) {
  EXPECT_DOUBLE_EQ(WeightAverage::DecayAt(0.999, 1), 2.0 / 11.0);
  EXPECT_DOUBLE_EQ(WeightAverage::DecayAt(0.999, 90), 91.0 / 100.0);
  EXPECT_DOUBLE_EQ(WeightAverage::DecayAt(0.999, 100'000), 0.999);
  EXPECT_DOUBLE_EQ(WeightAverage::DecayAt(0.5, 3), 4.0 / 13.0);  // the ramp, below the decay
  EXPECT_DOUBLE_EQ(WeightAverage::DecayAt(0.5, 20), 0.5);         // the decay, below the ramp
}

TEST(WeightAverage, FollowsTheFormulaOverParametersAndBuffers) {
  SmallNetwork net;
  ASSERT_GT(net.params.buffers().numel(), 0);
  Fill(net.params.params(), 1.0f);
  Fill(net.params.buffers(), -1.0f);
  WeightAverage average(0.9, net.params, CpuBackend());
  const std::vector<float> start_p = HostValues(net.params.params());
  const std::vector<float> start_b = HostValues(net.params.buffers());
  std::vector<double> want_p(start_p.begin(), start_p.end());
  std::vector<double> want_b(start_b.begin(), start_b.end());
  for (int64_t step = 1; step <= 40; ++step) {
    Fill(net.params.params(), static_cast<float>(step));  // the live weights move each step
    Fill(net.params.buffers(), -static_cast<float>(step));
    average.Update(step);
    const double d = WeightAverage::DecayAt(0.9, step);
    for (size_t i = 0; i < want_p.size(); ++i) want_p[i] = d * want_p[i] + (1 - d) * net.params.params().data()[i];
    for (size_t i = 0; i < want_b.size(); ++i) want_b[i] = d * want_b[i] + (1 - d) * net.params.buffers().data()[i];
  }
  const std::vector<float> got_p = HostValues(average.params());
  const std::vector<float> got_b = HostValues(average.buffers());
  for (size_t i = 0; i < want_p.size(); ++i) EXPECT_NEAR(got_p[i], want_p[i], 1e-4 * std::abs(want_p[i])) << i;
  for (size_t i = 0; i < want_b.size(); ++i) EXPECT_NEAR(got_b[i], want_b[i], 1e-4 * std::abs(want_b[i])) << i;
  // Behind the live weights (40) by about the average's window, not at the start (1).
  EXPECT_LT(got_p[0], 40.0f);
  EXPECT_GT(got_p[0], 25.0f);
}

TEST(WeightAverage, SwappedPutsTheAverageInAndTheLiveWeightsBack) {
  SmallNetwork net;
  Fill(net.params.params(), 1.0f);
  Fill(net.params.buffers(), 2.0f);
  WeightAverage average(0.5, net.params, CpuBackend());
  Fill(net.params.params(), 5.0f);
  Fill(net.params.buffers(), 6.0f);
  average.Update(100);  // d = 0.5: halfway
  const std::vector<float> live_p = HostValues(net.params.params());
  const std::vector<float> live_b = HostValues(net.params.buffers());
  {
    WeightAverage::Swapped swapped(average);
    EXPECT_EQ(HostValues(net.params.params()), HostValues(average.params()));
    EXPECT_EQ(HostValues(net.params.buffers()), HostValues(average.buffers()));
    EXPECT_FLOAT_EQ(net.params.params().data()[0], 3.0f);
    EXPECT_FLOAT_EQ(net.params.buffers().data()[0], 4.0f);
  }
  EXPECT_EQ(HostValues(net.params.params()), live_p);
  EXPECT_EQ(HostValues(net.params.buffers()), live_b);
}

TEST(WeightAverage, RestoreTakesSavedValuesAndRefusesTheWrongSize) {
  SmallNetwork net;
  WeightAverage average(0.99, net.params, CpuBackend());
  std::vector<float> p(static_cast<size_t>(net.params.num_params()), 7.0f);
  std::vector<float> b(static_cast<size_t>(net.params.buffers().numel()), 8.0f);
  ASSERT_TRUE(average.Restore(p, b).ok());
  EXPECT_EQ(HostValues(average.params()), p);
  EXPECT_EQ(HostValues(average.buffers()), b);
  p.pop_back();
  const absl::Status s = average.Restore(p, b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("the saved weight average holds"), std::string::npos) << s;
}

}  // namespace
}  // namespace gantry
