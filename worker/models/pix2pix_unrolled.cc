// Pix2pix::Unrolled: the losses and gradients of one unrolled step (--unroll M >= 2); the
// contract is in pix2pix.h's comment on unrolled training.
//
// Forward: G's M passes, each on the previous prediction with the window's mask, and for
// each step that carries a loss D's passes on its real and fake pair. Backward, as in the
// one-step path, G's tape first (so an overlapped exchange sends G's buckets while D's
// weight gradients are computed): from the last step to the first, dL/d prediction_k is
// its own loss's gradient (through D and the L1 term) plus what flows back from step k + 1
// through G's input and through D's judgement of step k + 1's condition; then D's tape.
#include <vector>

#include "worker/layers/concat.h"
#include "worker/layers/losses.h"
#include "worker/models/pix2pix.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr int64_t kFrame = Pix2pixConfig::kOutputChannels;
constexpr int64_t kCondition = Pix2pixConfig::kInputChannels;

// The seed of step k's G pass (k from 0): step 0 takes the step's own, as the one-step path.
uint64_t UnrolledStepSeed(uint64_t step_seed, int64_t k) {
  return k == 0 ? step_seed : Mix64(step_seed ^ (0x756e726f6c6cull + static_cast<uint64_t>(k)));  // "unroll"
}

// What one step that carries a loss keeps from its forward passes for the backward ones.
struct UnrolledLossStep {
  bool active = false;
  Context real_ctx, fake_ctx;
  SequentialCache d_real, d_fake;
  LossResult d_real_loss, d_fake_loss, g_fool, l1;
};

// Adds `from`'s first kFrame channels (of a [b, 4, S, S] gradient) into `into` ([b, 3, S, S]),
// or makes `into` them when it is undefined.
void AddFrameChannels(const Context& ctx, const Tensor& from, Tensor& into) {
  const Tensor frame = ConcatChannels().Backward(ctx, from, kFrame).first;
  if (!into.defined()) {
    into = frame;
    return;
  }
  ctx.backend->Axpy(frame.numel(), 1.0f, frame.data(), into.data());
}

}  // namespace

GanStepResult Pix2pix::Unrolled(const Context& ctx, const Tensor& x, const Tensor& targets, int64_t steps,
                                const GanLossWeights& weights, const GanGradientHooks& hooks) {
  CHECK_GE(steps, 2);
  CHECK_LE(steps * kFrame, targets.dim(1)) << "the window holds fewer targets than the steps";
  const UnrollConfig& u = config_.unroll;
  const Device device = x.device();
  const ConcatChannels concat;
  g_params_->ZeroGrads();
  d_params_->ZeroGrads();

  int64_t loss_steps = 0;
  for (int64_t k = 1; k <= steps; ++k) loss_steps += u.CarriesLoss(k, steps) ? 1 : 0;
  const float share = 1.0f / static_cast<float>(loss_steps);  // each step's part of the mean
  const Tensor mask = Channels(x, kFrame, 1, device);
  const int64_t first_in_graph = u.pushforward ? steps - 1 : 0;

  GanStepResult r;
  std::vector<Tensor> inputs{x};  // G's input at each step
  std::vector<Tensor> predictions;
  std::vector<SequentialCache> g_caches(static_cast<size_t>(steps));
  std::vector<UnrolledLossStep> loss(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    Context g_ctx = ctx;
    g_ctx.dropout_seed = UnrolledStepSeed(ctx.dropout_seed, k);
    SequentialCache outside_graph;  // pushforward's earlier steps: freed as the step ends
    predictions.push_back(generator_.Forward(g_ctx, inputs[k], k >= first_in_graph ? &g_caches[k] : &outside_graph));
    if (k + 1 < steps) inputs.push_back(concat.Forward(ctx, predictions[k], mask));
    if (!u.CarriesLoss(k + 1, steps)) continue;

    UnrolledLossStep& s = loss[k];
    s.active = true;
    s.real_ctx = s.fake_ctx = ctx;
    s.real_ctx.dropout_seed = Mix64(g_ctx.dropout_seed ^ 0x7265616cull);  // "real", as the one-step path
    s.fake_ctx.dropout_seed = Mix64(g_ctx.dropout_seed ^ 0x66616b65ull);  // "fake"
    const Tensor target = Channels(targets, k * kFrame, kFrame, device);
    const Tensor true_condition = k == 0 ? x : concat.Forward(ctx, Channels(targets, (k - 1) * kFrame, kFrame, device), mask);
    r.real_logits = discriminator_.Forward(s.real_ctx, concat.Forward(ctx, true_condition, target), &s.d_real);
    r.fake_logits = discriminator_.Forward(s.fake_ctx, concat.Forward(ctx, inputs[k], predictions[k]), &s.d_fake);
    s.d_real_loss = WeightedBceWithLogitsLoss(ctx, r.real_logits, 1.0f, 0.5f * weights.d * share);
    s.d_fake_loss = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 0.0f, 0.5f * weights.d * share);
    s.g_fool = WeightedBceWithLogitsLoss(ctx, r.fake_logits, 1.0f, weights.g * share);
    s.l1 = L1Loss(ctx, predictions[k], target);
    r.d_loss += 0.5 * (s.d_real_loss.loss + s.d_fake_loss.loss) / static_cast<double>(loss_steps);
    r.g_loss += (s.g_fool.loss + config_.l1_weight * s.l1.loss) / static_cast<double>(loss_steps);
    r.fake = predictions[k];
  }

  // Generator tape: the last step first; `carry` is dL/d prediction_k from the steps after k.
  Tensor carry;
  for (int64_t k = steps - 1; k >= first_in_graph; --k) {
    UnrolledLossStep& s = loss[k];
    Tensor grad = std::move(carry);
    carry = Tensor();
    Tensor condition_grad;  // dL/d inputs[k] through D's judgement of the fake pair
    if (s.active) {
      Context no_param_grads = s.fake_ctx;
      no_param_grads.param_grads = false;
      const Tensor d_pair = discriminator_.Backward(no_param_grads, s.g_fool.grad, s.d_fake, /*want_input_grad=*/true);
      auto [condition_part, image_part] = concat.Backward(ctx, d_pair, kCondition);
      ctx.backend->Axpy(s.l1.grad.numel(), config_.l1_weight * weights.g * share, s.l1.grad.data(), image_part.data());
      if (grad.defined()) ctx.backend->Axpy(grad.numel(), 1.0f, grad.data(), image_part.data());
      grad = image_part;
      condition_grad = condition_part;
    }
    CHECK(grad.defined()) << "unrolled step " << k << " has neither a loss nor a later step";
    const bool into_earlier = k > first_in_graph;
    Context g_ctx = ctx;
    g_ctx.dropout_seed = UnrolledStepSeed(ctx.dropout_seed, k);
    if (!into_earlier) g_ctx.gradients_ready = hooks.generator;  // G's last backward pass
    const Tensor input_grad = generator_.Backward(g_ctx, grad, g_caches[k], into_earlier);
    g_caches[k] = SequentialCache();
    if (!into_earlier) continue;
    AddFrameChannels(ctx, input_grad, carry);  // the mask's gradient is dropped: it is data
    if (condition_grad.defined()) AddFrameChannels(ctx, condition_grad, carry);
  }

  // Discriminator tape: each step's real then fake pass; the last step's fake pass is D's last.
  for (int64_t k = 0; k < steps; ++k) {
    UnrolledLossStep& s = loss[k];
    if (!s.active) continue;
    discriminator_.Backward(s.real_ctx, s.d_real_loss.grad, s.d_real, /*want_input_grad=*/false);
    Context fake_ctx = s.fake_ctx;
    if (k + 1 == steps) fake_ctx.gradients_ready = hooks.discriminator;
    discriminator_.Backward(fake_ctx, s.d_fake_loss.grad, s.d_fake, /*want_input_grad=*/false);
    s = UnrolledLossStep();
  }
  return r;
}

}  // namespace gantry
