#include "worker/layers/dropout.h"

namespace gantry {

Dropout::Dropout(float rate) : rate_(rate) {
  CHECK(rate >= 0.0f && rate < 1.0f) << "dropout rate " << rate;
}

Tensor Dropout::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  cache->saved.clear();
  if (!ctx.training || rate_ == 0.0f) return x;
  Tensor mask = ctx.Uninitialized(x.shape());
  Tensor y = ctx.Uninitialized(x.shape());
  ctx.backend->DropoutForward(x.numel(), rate_, ctx.dropout_seed, x.data(), mask.data(), y.data());
  cache->saved = {mask};
  return y;
}

Tensor Dropout::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                         bool want_input_grad) {
  if (!want_input_grad) return Tensor();
  // An empty cache means Forward was the identity.
  if (cache.saved.empty()) return dy;
  const Tensor& mask = cache.saved[0];
  CHECK(dy.shape() == mask.shape()) << "dropout: dy " << dy.shape().ToString() << " vs "
                                    << mask.shape().ToString();
  Tensor dx = ctx.Uninitialized(dy.shape());
  ctx.backend->Multiply(dy.numel(), dy.data(), mask.data(), dx.data());
  return dx;
}

}  // namespace gantry
