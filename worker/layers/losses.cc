#include "worker/layers/losses.h"

namespace gantry {

LossResult BceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target) {
  CHECK_GT(logits.numel(), 0) << "loss of an empty tensor";
  LossResult r{0.0, ctx.Uninitialized(logits.shape())};
  r.loss = ctx.backend->BceWithLogits(logits.numel(), logits.data(), target, r.grad.data());
  return r;
}

LossResult L1Loss(const Context& ctx, const Tensor& pred, const Tensor& target) {
  CHECK(pred.shape() == target.shape()) << "l1 of " << pred.shape().ToString() << " and "
                                        << target.shape().ToString();
  CHECK_GT(pred.numel(), 0) << "loss of an empty tensor";
  LossResult r{0.0, ctx.Zeros(pred.shape())};
  r.loss = ctx.backend->L1Loss(pred.numel(), pred.data(), target.data(), r.grad.data());
  return r;
}

}  // namespace gantry
