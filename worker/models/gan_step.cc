#include "worker/models/gan_step.h"

#include "worker/layers/diff_augment.h"
#include "worker/layers/losses.h"
#include "worker/tensor/random.h"

namespace gantry {

namespace {

AugmentTransforms TransformsOf(const AugmentPolicy& p) {
  return AugmentTransforms{.color = p.color, .translation = p.translation, .cutout = p.cutout};
}

}  // namespace

uint64_t RealAugmentSeed(uint64_t step_seed) { return Mix64(step_seed ^ 0x6175672d7265616cull); }  // "aug-real"
uint64_t FakeAugmentSeed(uint64_t step_seed) { return Mix64(step_seed ^ 0x6175672d66616b65ull); }  // "aug-fake"

GanStepResult ComputeGanGradients(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                  const GanLossWeights& weights, const AugmentPolicy& augment,
                                  const GanGradientHooks& hooks) {
  CHECK_EQ(real.dim(0), z.dim(0)) << "real and noise batches differ";
  Sequential& g = model.generator();
  Sequential& d = model.discriminator();
  model.g_params().ZeroGrads();
  model.d_params().ZeroGrads();

  Context real_ctx = ctx, fake_ctx = ctx;
  real_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x7265616cull);  // "real"
  fake_ctx.dropout_seed = Mix64(ctx.dropout_seed ^ 0x66616b65ull);  // "fake"

  // D's inputs: T(real) and T(fake) with independent draws, or the images themselves
  // (views, no copy) without a policy.
  DiffAugment transform(TransformsOf(augment));
  Context real_augment_ctx = ctx, fake_augment_ctx = ctx;
  real_augment_ctx.dropout_seed = RealAugmentSeed(ctx.dropout_seed);
  fake_augment_ctx.dropout_seed = FakeAugmentSeed(ctx.dropout_seed);
  ActivationCache real_augment_cache, fake_augment_cache;

  GanStepResult r;
  SequentialCache g_cache, d_real_cache, d_fake_cache;
  r.fake = g.Forward(ctx, z, &g_cache);
  const Tensor d_real_input = transform.Forward(real_augment_ctx, real, &real_augment_cache);
  const Tensor d_fake_input = transform.Forward(fake_augment_ctx, r.fake, &fake_augment_cache);
  r.real_logits = d.Forward(real_ctx, d_real_input, &d_real_cache);
  r.fake_logits = d.Forward(fake_ctx, d_fake_input, &d_fake_cache);

  // Generator tape first, through D (input gradient only) and T, then into G: G's
  // gradients are final before D's weight-gradient passes run, so an overlapped exchange
  // sends G's (most of the step's bytes) while D's backward computes. The order of the
  // tapes changes no value: each network's gradient buffer gets the same additions in the
  // same order, and the passes share only read-only caches.
  const LossResult d_real = WeightedBceWithLogitsLoss(ctx, r.real_logits, 1.0f, weights.d);
  const LossResult d_fake = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 0.0f, weights.d);
  const LossResult g_fool = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 1.0f, weights.g);
  Context no_param_grads = fake_ctx;
  no_param_grads.param_grads = false;
  const Tensor d_fake_input_grad = d.Backward(no_param_grads, g_fool.grad, d_fake_cache, /*want_input_grad=*/true);
  const Tensor d_fake_image =
      transform.Backward(fake_augment_ctx, d_fake_input_grad, fake_augment_cache, /*want_input_grad=*/true);
  Context g_ctx = ctx;
  g_ctx.gradients_ready = hooks.generator;
  g.Backward(g_ctx, d_fake_image, g_cache, /*want_input_grad=*/false);

  // Discriminator tape: both passes accumulate into D's gradient buffer; the second is
  // the last, so it reports D's finished layers.
  d.Backward(real_ctx, d_real.grad, d_real_cache, /*want_input_grad=*/false);
  Context d_last_ctx = fake_ctx;
  d_last_ctx.gradients_ready = hooks.discriminator;
  d.Backward(d_last_ctx, d_fake.grad, d_fake_cache, /*want_input_grad=*/false);

  r.d_loss = d_real.loss + d_fake.loss;
  r.g_loss = g_fool.loss;
  return r;
}

}  // namespace gantry
