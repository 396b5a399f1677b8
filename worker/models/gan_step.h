// The gradients of one step of an unconditional GAN (the paper's / TF tutorial's
// train_step), the loss the DCGAN uses:
//   fake = G(z); real_logits = D(real); fake_logits = D(fake)
//   d_loss = BCE(real_logits, 1) + BCE(fake_logits, 0)     -> gradients for D only
//   g_loss = BCE(fake_logits, 1)                           -> gradients for G only
// One G forward and two D forwards serve both "tapes"; D's weight gradients are not
// computed in the generator's pass.
//
// With an augmentation policy (--augment, worker/layers/diff_augment.h) D sees T(real) and
// T(fake) instead, each pass with its own draws, and G's gradient flows back through T.
// DiffAugment's own training loop runs D on a freshly augmented T(G(z)) again for G's
// loss; here the one D pass on T(fake) serves both tapes, as the one D pass on fake does
// without augmentation, so its draws are shared by D's and G's losses. Without a policy
// the step is exactly the one without the op (no copy, same seeds).
#pragma once

#include "runspec/augment_policy.h"
#include "worker/layers/layer.h"
#include "worker/models/gan_model.h"

namespace gantry {

// Zeroes both gradient buffers and fills D's with the gradients of weights.d times this
// batch's mean D loss, and G's with those of weights.g times its mean G loss.
// ctx.dropout_seed seeds D's dropout: the real and fake passes use distinct masks
// derived from it, and the augmentation's draws of each pass come from further seeds
// derived from it (with ctx.row_offset, the rows' place in the global batch). No
// optimizer step is taken. G's gradients are computed first, then D's; `hooks` hear of
// each network's finished layers as its last backward pass goes.
//
// Data parallelism: a rank holding b of the global batch's B rows passes weights of
// b / B, so the ranks' gradients SUM to the whole batch's mean gradient (and sync-BN
// sees gradients of the global loss). Loss scaling multiplies each network's weight by
// that network's scale (a power of two in dynamic mode, so (b / B) * scale rounds
// exactly as b / B does). The returned losses are unweighted.
GanStepResult ComputeGanGradients(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                  const GanLossWeights& weights, const AugmentPolicy& augment = {},
                                  const GanGradientHooks& hooks = {});

// The seeds of the augmentation draws of a step's real and of its fake pass (DiffAugment's
// ctx.dropout_seed), from the step's ctx.dropout_seed: distinct from each other and from
// the passes' dropout seeds.
uint64_t RealAugmentSeed(uint64_t step_seed);
uint64_t FakeAugmentSeed(uint64_t step_seed);

// The same weight for both networks.
inline GanStepResult ComputeGanGradients(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                         float loss_weight = 1.0f) {
  return ComputeGanGradients(ctx, model, real, z, GanLossWeights{loss_weight, loss_weight});
}

}  // namespace gantry
