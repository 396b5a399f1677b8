#include "worker/layers/batch_norm.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;

// A BatchNorm bound to its own flat buffers, with gamma/beta (and running statistics
// when asked) set to non-trivial values so no term of a gradient vanishes.
struct BoundBatchNorm {
  explicit BoundBatchNorm(int64_t channels, float momentum = 0.99f)
      : layer(channels, 1e-3f, momentum), params(std::span<Layer* const>(layers)) {
    Rng rng(1);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    const Tensor p = params.params();  // gamma then beta
    for (int64_t ch = 0; ch < channels; ++ch) {
      p.data()[ch] = 0.5f + 0.25f * static_cast<float>(ch);
      p.data()[channels + ch] = 0.1f * static_cast<float>(ch) - 0.2f;
    }
  }
  void SetRunningStats(float mean_base, float var_base) const {
    for (int64_t ch = 0; ch < layer.channels(); ++ch) {
      layer.running_mean().data()[ch] = mean_base + 0.1f * static_cast<float>(ch);
      layer.running_var().data()[ch] = var_base + 0.5f * static_cast<float>(ch);
    }
  }

  BatchNorm layer;
  Layer* layers[1] = {&layer};
  FlatParameters params;
};

Context Eval() {
  Context ctx;
  ctx.training = false;
  return ctx;
}

TEST(BatchNormTest, SpecsAndShapes) {
  BatchNorm bn(4);
  EXPECT_EQ(bn.name(), "batch_norm");
  EXPECT_EQ(bn.OutputShape(Shape{8, 4}), (Shape{8, 4}));
  EXPECT_EQ(bn.OutputShape(Shape{8, 4, 7, 7}), (Shape{8, 4, 7, 7}));
  const auto p = bn.ParamSpecs();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].name, "gamma");
  EXPECT_EQ(p[0].init, Init::kOnes);
  EXPECT_EQ(p[1].name, "beta");
  EXPECT_EQ(p[1].init, Init::kZeros);
  const auto b = bn.BufferSpecs();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].name, "running_mean");
  EXPECT_EQ(b[0].init, Init::kZeros);
  EXPECT_EQ(b[1].name, "running_var");
  EXPECT_EQ(b[1].init, Init::kOnes);
  EXPECT_EQ(b[1].shape, (Shape{4}));
}

TEST(BatchNormTest, TrainingGradientsMatchFiniteDifferences1d) {
  BoundBatchNorm bn(3);
  CheckLayerGradients(bn.layer, &bn.params, Shape{32, 3}, Context{});
}

TEST(BatchNormTest, TrainingGradientsMatchFiniteDifferences2d) {
  BoundBatchNorm bn(3);
  CheckLayerGradients(bn.layer, &bn.params, Shape{6, 3, 4, 4}, Context{});
}

TEST(BatchNormTest, EvalGradientsMatchFiniteDifferences) {
  for (const Shape& shape : {Shape{8, 3}, Shape{2, 3, 3, 3}}) {
    SCOPED_TRACE(shape.ToString());
    BoundBatchNorm bn(3);
    bn.SetRunningStats(0.3f, 0.7f);
    CheckLayerGradients(bn.layer, &bn.params, shape, Eval());
  }
}

TEST(BatchNormTest, TrainingNormalisesWithBatchStatistics) {
  BoundBatchNorm bn(2);
  const Tensor x = RandomTensor(Shape{16, 2, 3, 3}, 2, 4.0f);
  ActivationCache cache;
  const Tensor y = bn.layer.Forward(Context{}, x, &cache);
  const float* gamma = bn.params.params().data();
  for (int64_t ch = 0; ch < 2; ++ch) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t k = 0; k < 9; ++k) sum += y.at((i * 2 + ch) * 9 + k);
    const double mean = sum / 144.0;
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t k = 0; k < 9; ++k) sq += std::pow(y.at((i * 2 + ch) * 9 + k) - mean, 2);
    EXPECT_NEAR(mean, gamma[2 + ch], 1e-5);  // beta
    EXPECT_NEAR(std::sqrt(sq / 144.0), gamma[ch], 1e-3);  // gamma, up to eps in the variance
  }
}

TEST(BatchNormTest, TrainingUpdatesRunningStatsWithUnbiasedVariance) {
  BoundBatchNorm bn(2, /*momentum=*/0.9f);
  bn.SetRunningStats(1.0f, 2.0f);  // channel 0: (1.0, 2.0); channel 1: (1.1, 2.5)
  // Channel 0 holds 1, 2, 3, 4 (mean 2.5, unbiased var 5/3); channel 1 is constant 7.
  const Tensor x = Tensor::FromVector(Shape{2, 2, 2}, {1, 2, 7, 7, 3, 4, 7, 7});
  ActivationCache cache;
  bn.layer.Forward(Context{}, x, &cache);
  EXPECT_NEAR(bn.layer.running_mean().at(0), 0.9 * 1.0 + 0.1 * 2.5, 1e-6);
  EXPECT_NEAR(bn.layer.running_mean().at(1), 0.9 * 1.1 + 0.1 * 7.0, 1e-6);
  EXPECT_NEAR(bn.layer.running_var().at(0), 0.9 * 2.0 + 0.1 * (5.0 / 3.0), 1e-6);
  EXPECT_NEAR(bn.layer.running_var().at(1), 0.9 * 2.5, 1e-6);
}

TEST(BatchNormTest, EvalUsesRunningStatsAndLeavesThemAlone) {
  BoundBatchNorm bn(2);
  bn.SetRunningStats(0.5f, 1.5f);
  const Tensor x = RandomTensor(Shape{3, 2, 2, 2}, 3);
  ActivationCache cache;
  const Tensor y = bn.layer.Forward(Eval(), x, &cache);
  const float* p = bn.params.params().data();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t ch = (i / 4) % 2;
    const double rm = bn.layer.running_mean().at(ch), rv = bn.layer.running_var().at(ch);
    EXPECT_NEAR(y.at(i), (x.at(i) - rm) / std::sqrt(rv + 1e-3) * p[ch] + p[2 + ch], 1e-5) << i;
  }
  EXPECT_FLOAT_EQ(bn.layer.running_mean().at(1), 0.6f);
  EXPECT_FLOAT_EQ(bn.layer.running_var().at(1), 2.0f);
}

TEST(BatchNormTest, BackwardFollowsItsForwardsModeAndStatistics) {
  BoundBatchNorm bn(2);
  bn.SetRunningStats(0.5f, 1.5f);
  const Tensor x = RandomTensor(Shape{4, 2}, 4), dy = RandomTensor(Shape{4, 2}, 5);
  ActivationCache eval_cache, other;
  bn.layer.Forward(Eval(), x, &eval_cache);
  const Tensor expected = bn.layer.Backward(Eval(), dy, eval_cache, true).Clone();
  bn.layer.Forward(Context{}, RandomTensor(Shape{4, 2}, 6), &other);  // moves the running stats
  const Tensor dx = bn.layer.Backward(Context{}, dy, eval_cache, true);
  for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_EQ(dx.at(i), expected.at(i)) << i;
}

TEST(BatchNormTest, ParamGradsAccumulateOnlyWhenAsked) {
  BoundBatchNorm bn(3);
  const Tensor x = RandomTensor(Shape{5, 3}, 7), dy = RandomTensor(Shape{5, 3}, 8);
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "eval");
    Context ctx;
    ctx.training = training;
    ActivationCache cache;
    bn.layer.Forward(ctx, x, &cache);
    bn.params.ZeroGrads();
    EXPECT_FALSE(bn.layer.Backward(ctx, dy, cache, /*want_input_grad=*/false).defined());
    const Tensor once = bn.params.grads().Clone();
    bn.layer.Backward(ctx, dy, cache, false);
    for (int64_t i = 0; i < once.numel(); ++i) {
      EXPECT_NE(once.at(i), 0.0f) << i;
      EXPECT_FLOAT_EQ(bn.params.grads().at(i), 2.0f * once.at(i)) << i;
    }
    ctx.param_grads = false;
    bn.params.ZeroGrads();
    EXPECT_TRUE(bn.layer.Backward(ctx, dy, cache, true).defined());
    for (int64_t i = 0; i < once.numel(); ++i) EXPECT_EQ(bn.params.grads().at(i), 0.0f) << i;
  }
}

}  // namespace
}  // namespace gantry
