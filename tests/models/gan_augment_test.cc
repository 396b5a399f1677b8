// --augment in the unconditional GAN step (gan_step.h): without a policy the step is
// bit for bit the step from before the op existed; with one, D sees T(real) and T(fake)
// with independent draws, and G's gradient is the gradient of its loss through T.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/diff_augment.h"
#include "worker/layers/losses.h"
#include "worker/models/dcgan.h"
#include "worker/models/gan_step.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using testing::RandomTensor;

constexpr AugmentPolicy kAll{.color = true, .translation = true, .cutout = true};
constexpr int64_t kBatch = 4;

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

struct Step {
  GanStepResult result;
  Tensor g_grads, d_grads;
};

Step Capture(GanModel& model, GanStepResult result) {
  return Step{std::move(result), model.g_params().grads().Clone(), model.d_params().grads().Clone()};
}

Context StepContext(uint64_t seed) {
  Context ctx;
  ctx.dropout_seed = seed;
  return ctx;
}

// ComputeGanGradients as it was before --augment (commit 49bb701), written out: the
// reference an unaugmented step must still equal bit for bit.
GanStepResult StepBeforeAugmentation(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                     const GanLossWeights& weights) {
  auto weighted_bce = [&](const Tensor& logits, float target, float weight) {
    LossResult r = BceWithLogitsLoss(ctx, logits, target);
    if (weight != 1.0f) ctx.backend->Scale(r.grad.numel(), weight, r.grad.data());
    return r;
  };
  Sequential& g = model.generator();
  Sequential& d = model.discriminator();
  model.g_params().ZeroGrads();
  model.d_params().ZeroGrads();
  Context real_ctx = ctx, fake_ctx = ctx;
  real_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x7265616cull);
  fake_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x66616b65ull);
  GanStepResult r;
  SequentialCache g_cache, d_real_cache, d_fake_cache;
  r.fake = g.Forward(ctx, z, &g_cache);
  r.real_logits = d.Forward(real_ctx, real, &d_real_cache);
  r.fake_logits = d.Forward(fake_ctx, r.fake, &d_fake_cache);
  const LossResult d_real = weighted_bce(r.real_logits, 1.0f, weights.d);
  const LossResult d_fake = weighted_bce(r.fake_logits, 0.0f, weights.d);
  d.Backward(real_ctx, d_real.grad, d_real_cache, false);
  d.Backward(fake_ctx, d_fake.grad, d_fake_cache, false);
  const LossResult g_fool = weighted_bce(r.fake_logits, 1.0f, weights.g);
  Context no_param_grads = fake_ctx;
  no_param_grads.param_grads = false;
  g.Backward(ctx, d.Backward(no_param_grads, g_fool.grad, d_fake_cache, true), g_cache, false);
  r.d_loss = d_real.loss + d_fake.loss;
  r.g_loss = g_fool.loss;
  return r;
}

TEST(GanAugment, WithoutAPolicyTheStepIsBitIdenticalToTheStepBeforeAugmentation) {
  const Tensor real = RandomTensor(Shape{kBatch, 1, 28, 28}, 2);
  const Tensor z = RandomTensor(Shape{kBatch, 100}, 3);
  const GanLossWeights weights{0.5f, 0.25f};  // a rank's share, as the data-parallel step passes
  Dcgan today(DcganConfig{});  // dropout on: its seeds must be untouched too
  today.Initialize(InitScheme::kGlorotUniform, 1);
  const Step now = Capture(today, ComputeGanGradients(StepContext(9), today, real, z, weights, AugmentPolicy{}));
  Dcgan before(DcganConfig{});
  before.Initialize(InitScheme::kGlorotUniform, 1);
  const Step then = Capture(before, StepBeforeAugmentation(StepContext(9), before, real, z, weights));
  EXPECT_TRUE(SameBits(now.g_grads, then.g_grads));
  EXPECT_TRUE(SameBits(now.d_grads, then.d_grads));
  EXPECT_TRUE(SameBits(now.result.real_logits, then.result.real_logits));
  EXPECT_TRUE(SameBits(now.result.fake_logits, then.result.fake_logits));
  EXPECT_EQ(now.result.d_loss, then.result.d_loss);
  EXPECT_EQ(now.result.g_loss, then.result.g_loss);
}

// D sees T(real) and T(fake), each with its own draws (so the same images would be
// transformed differently in the two passes), and fake itself stays G's output.
TEST(GanAugment, APolicyShowsDTransformedImagesWithIndependentDraws) {
  DcganConfig config;
  config.dropout = 0.0f;  // D's logits recomputed below without its masks
  const Tensor real = RandomTensor(Shape{kBatch, 1, 28, 28}, 2);
  const Tensor z = RandomTensor(Shape{kBatch, 100}, 3);
  Dcgan plain(config);
  plain.Initialize(InitScheme::kGlorotUniform, 1);
  const Step off = Capture(plain, ComputeGanGradients(StepContext(9), plain, real, z));
  Dcgan augmented(config, Device::kCpu, kAll);
  augmented.Initialize(InitScheme::kGlorotUniform, 1);
  const Step on = Capture(augmented, augmented.ComputeGradients(StepContext(9), GanInputs{real, z}, {}));

  EXPECT_TRUE(SameBits(on.result.fake, off.result.fake));
  EXPECT_FALSE(SameBits(on.result.real_logits, off.result.real_logits));
  EXPECT_FALSE(SameBits(on.d_grads, off.d_grads));
  EXPECT_FALSE(SameBits(on.g_grads, off.g_grads));

  DiffAugment transform(AugmentTransforms{.color = true, .translation = true, .cutout = true});
  auto logits_of_transformed_real = [&](uint64_t augment_seed) {
    Context ctx = StepContext(augment_seed);
    ActivationCache cache;
    SequentialCache d_cache;
    return augmented.discriminator().Forward(StepContext(0), transform.Forward(ctx, real, &cache), &d_cache);
  };
  EXPECT_TRUE(SameBits(on.result.real_logits, logits_of_transformed_real(RealAugmentSeed(9))));
  EXPECT_FALSE(SameBits(on.result.real_logits, logits_of_transformed_real(FakeAugmentSeed(9))));
  for (int64_t row = 0; row < kBatch; ++row) {
    EXPECT_NE(DrawAugment(RealAugmentSeed(9), row, 28, 28).brightness,
              DrawAugment(FakeAugmentSeed(9), row, 28, 28).brightness);
  }
}

// Under bf16 the images D sees are fp32 still (only the products' operands are rounded,
// inside the layers), so the op composes with a bf16 step unchanged.
TEST(GanAugment, ABf16StepAugmentsToo) {
  const GanInputs inputs{RandomTensor(Shape{kBatch, 1, 28, 28}, 2), RandomTensor(Shape{kBatch, 100}, 3)};
  Context ctx = StepContext(9);
  ctx.precision = MathPrecision::kBf16;
  Dcgan plain(DcganConfig{});
  plain.Initialize(InitScheme::kGlorotUniform, 1);
  const Step off = Capture(plain, plain.ComputeGradients(ctx, inputs, {}));
  Dcgan augmented(DcganConfig{}, Device::kCpu, kAll);
  augmented.Initialize(InitScheme::kGlorotUniform, 1);
  const Step on = Capture(augmented, augmented.ComputeGradients(ctx, inputs, {}));
  EXPECT_FALSE(SameBits(on.result.real_logits, off.result.real_logits));
  EXPECT_FALSE(SameBits(on.g_grads, off.g_grads));
  for (int64_t i = 0; i < on.g_grads.numel(); ++i) ASSERT_TRUE(std::isfinite(on.g_grads.at(i))) << i;
}

// G's gradient is the gradient of G's loss through T: along the gradient's own direction
// the loss changes at |gradient|. A G gradient that skipped T's adjoint (the gradient of
// D's input handed to G unshifted, unmasked) points elsewhere and misses this by tens of
// percent; fp32 round-off and LeakyReLU kinks keep the difference quotient within 1%.
TEST(GanAugment, TheGeneratorsGradientFlowsThroughTheAugmentation) {
  DcganConfig config;
  config.dropout = 0.0f;
  Dcgan model(config, Device::kCpu, kAll);
  model.Initialize(InitScheme::kGlorotUniform, 4);
  const GanInputs inputs{RandomTensor(Shape{kBatch, 1, 28, 28}, 5), RandomTensor(Shape{kBatch, 100}, 6)};
  const Context ctx = StepContext(17);
  model.ComputeGradients(ctx, inputs, {});
  const Tensor grad = model.g_params().grads().Clone();
  const Tensor start = model.g_params().params().Clone();
  double norm = 0;
  for (int64_t i = 0; i < grad.numel(); ++i) norm += static_cast<double>(grad.at(i)) * grad.at(i);
  norm = std::sqrt(norm);
  ASSERT_GT(norm, 0);
  // A step of about 1e-3 in the loss either way.
  const double step = 1e-3 / norm;
  auto loss_at = [&](double t) {
    float* p = model.g_params().params().data();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      p[i] = static_cast<float>(start.at(i) + t * grad.at(i) / norm);
    }
    return model.ComputeGradients(ctx, inputs, {}).g_loss;
  };
  const double slope = (loss_at(step) - loss_at(-step)) / (2 * step);
  EXPECT_NEAR(slope / norm, 1.0, 0.01) << "d(g_loss) along the gradient " << slope << ", |gradient| " << norm;
}

}  // namespace
}  // namespace gantry
