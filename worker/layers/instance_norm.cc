#include "worker/layers/instance_norm.h"

#include <vector>

namespace gantry {
namespace {

enum CacheSlot { kInput = 0, kMean = 1, kVar = 2, kNumSlots = 3 };

// `count` copies of `value` on the context's device.
Tensor Constant(const Context& ctx, int64_t count, float value) {
  return Tensor::FromVector(Shape{count}, std::vector<float>(static_cast<size_t>(count), value)).On(ctx.device());
}

}  // namespace

InstanceNorm::InstanceNorm(int64_t channels, float eps) : channels_(channels), eps_(eps) {
  CHECK_GT(channels, 0);
  CHECK_GT(eps, 0.0f);
}

Shape InstanceNorm::OutputShape(const Shape& input) const {
  CHECK_EQ(input.rank(), 4) << "instance_norm input " << input.ToString();
  CHECK_EQ(input[1], channels_) << "instance_norm input " << input.ToString();
  CHECK_GT(input[2] * input[3], 1) << "instance_norm of 1x1 planes is 0: " << input.ToString();
  return input;
}

Tensor InstanceNorm::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  OutputShape(x.shape());
  const int64_t planes = x.dim(0) * channels_, hw = x.dim(2) * x.dim(3);
  Tensor mean = ctx.Zeros(Shape{planes});
  Tensor var = ctx.Zeros(Shape{planes});
  Tensor y = ctx.Uninitialized(x.shape());
  Backend& b = *ctx.backend;
  b.BatchNormStats(1, planes, hw, x.data(), mean.data(), var.data());
  const Tensor ones = Constant(ctx, planes, 1.0f), zeros = ctx.Zeros(Shape{planes});
  b.BatchNormApply(1, planes, hw, x.data(), mean.data(), var.data(), eps_, ones.data(), zeros.data(), y.data());
  cache->saved = {x, mean, var};
  return y;
}

Tensor InstanceNorm::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                              bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), static_cast<size_t>(kNumSlots)) << "cache is not from instance_norm's Forward";
  const Tensor& x = cache.saved[kInput];
  CHECK(dy.shape() == x.shape()) << "instance_norm: dy " << dy.shape().ToString() << " vs x " << x.shape().ToString();
  if (!want_input_grad) return Tensor();
  const int64_t planes = x.dim(0) * channels_, hw = x.dim(2) * x.dim(3);
  const Tensor ones = Constant(ctx, planes, 1.0f);
  // The kernel accumulates gamma/beta gradients, which this layer does not have: scratch.
  const Tensor dgamma = ctx.Zeros(Shape{planes}), dbeta = ctx.Zeros(Shape{planes});
  Tensor dx = ctx.Uninitialized(x.shape());
  ctx.backend->BatchNormBackward(1, planes, hw, x.data(), dy.data(), cache.saved[kMean].data(),
                                 cache.saved[kVar].data(), eps_, ones.data(), dx.data(), dgamma.data(), dbeta.data());
  return dx;
}

}  // namespace gantry
