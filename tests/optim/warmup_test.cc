// The learning-rate warm-up as the optimizers apply it: a ramp over the first steps that
// follows the step count, so a restored optimizer continues it exactly.
#include <vector>

#include "gtest/gtest.h"
#include "worker/optim/optimizer.h"

namespace gantry {
namespace {

// SGD without momentum and a gradient of 1 moves the parameter by exactly the rate.
std::vector<float> RatesOfSteps(Optimizer& sgd, int steps) {
  const Tensor p = Tensor::FromVector(Shape{1}, {0.0f});
  const Tensor g = Tensor::FromVector(Shape{1}, {1.0f});
  std::vector<float> rates;
  for (int i = 0; i < steps; ++i) {
    const float before = p.at(0);
    sgd.Step(CpuBackend(), p, g);
    rates.push_back(before - p.at(0));
  }
  return rates;
}

OptimizerConfig PlainSgd(float lr) {
  OptimizerConfig c;
  c.kind = "sgd";
  c.lr = lr;
  c.momentum = 0;
  return c;
}

TEST(Warmup, RampsLinearlyFromTheStartFractionThenHolds) {
  LearningRateRule rule;
  rule.warmup_steps = 4;
  rule.warmup_start = 0.25;
  auto sgd = MakeOptimizer(PlainSgd(1.0f), 1, Device::kCpu, rule);
  ASSERT_TRUE(sgd.ok()) << sgd.status();
  const std::vector<float> rates = RatesOfSteps(**sgd, 6);
  const std::vector<float> expected = {0.25f, 0.4375f, 0.625f, 0.8125f, 1.0f, 1.0f};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(rates[i], expected[i], 1e-6) << "step " << i;
}

TEST(Warmup, ARestoredOptimizerContinuesTheRamp) {
  LearningRateRule rule;
  rule.warmup_steps = 4;
  rule.warmup_start = 0.25;
  auto sgd = MakeOptimizer(PlainSgd(1.0f), 1, Device::kCpu, rule);
  ASSERT_TRUE(sgd.ok());
  ASSERT_TRUE((*sgd)->RestoreState({{0.0f}}, 2).ok());
  const std::vector<float> rates = RatesOfSteps(**sgd, 3);
  EXPECT_NEAR(rates[0], 0.625f, 1e-6);
  EXPECT_NEAR(rates[1], 0.8125f, 1e-6);
  EXPECT_NEAR(rates[2], 1.0f, 1e-6);
}

TEST(Warmup, NoWarmUpLeavesTheRateAsConfigured) {
  auto sgd = MakeOptimizer(PlainSgd(0.5f), 1);
  ASSERT_TRUE(sgd.ok());
  for (float r : RatesOfSteps(**sgd, 3)) EXPECT_EQ(r, 0.5f);
}

TEST(Warmup, AdamWarmsUpToo) {
  OptimizerConfig c;
  c.lr = 0.01f;
  LearningRateRule rule;
  rule.warmup_steps = 10;
  rule.warmup_start = 0.1;
  auto warmed = MakeOptimizer(c, 1, Device::kCpu, rule);
  auto plain = MakeOptimizer(c, 1);
  ASSERT_TRUE(warmed.ok() && plain.ok());
  // Adam's first step moves by about the rate whatever the gradient's size.
  EXPECT_NEAR(RatesOfSteps(**warmed, 1)[0], 0.001f, 1e-5);
  EXPECT_NEAR(RatesOfSteps(**plain, 1)[0], 0.01f, 1e-5);
}

TEST(Warmup, RefusesABadRule) {
  LearningRateRule rule;
  rule.warmup_steps = 5;
  rule.warmup_start = 0;
  EXPECT_EQ(MakeOptimizer(PlainSgd(1.0f), 1, Device::kCpu, rule).status().code(),
            absl::StatusCode::kInvalidArgument);
  rule.warmup_start = 1.5;
  EXPECT_EQ(MakeOptimizer(PlainSgd(1.0f), 1, Device::kCpu, rule).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gantry
