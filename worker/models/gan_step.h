// The gradients of one step of an unconditional GAN (the paper's / TF tutorial's
// train_step), the loss the DCGAN uses:
//   fake = G(z); real_logits = D(real); fake_logits = D(fake)
//   d_loss = BCE(real_logits, 1) + BCE(fake_logits, 0)     -> gradients for D only
//   g_loss = BCE(fake_logits, 1)                           -> gradients for G only
// One G forward and two D forwards serve both "tapes"; D's weight gradients are not
// computed in the generator's pass.
#pragma once

#include "worker/layers/layer.h"
#include "worker/models/gan_model.h"

namespace gantry {

// Zeroes both gradient buffers and fills D's with the gradients of weights.d times this
// batch's mean D loss, and G's with those of weights.g times its mean G loss.
// ctx.dropout_seed seeds D's dropout: the real and fake passes use distinct masks
// derived from it. No optimizer step is taken.
//
// Data parallelism: a rank holding b of the global batch's B rows passes weights of
// b / B, so the ranks' gradients SUM to the whole batch's mean gradient (and sync-BN
// sees gradients of the global loss). Loss scaling multiplies each network's weight by
// that network's scale (a power of two in dynamic mode, so (b / B) * scale rounds
// exactly as b / B does). The returned losses are unweighted.
GanStepResult ComputeGanGradients(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                  const GanLossWeights& weights);

// The same weight for both networks.
inline GanStepResult ComputeGanGradients(const Context& ctx, GanModel& model, const Tensor& real, const Tensor& z,
                                         float loss_weight = 1.0f) {
  return ComputeGanGradients(ctx, model, real, z, GanLossWeights{loss_weight, loss_weight});
}

}  // namespace gantry
