#include "worker/layers/activation.h"

namespace gantry {

ActivationLayer::ActivationLayer(Activation f, float slope) : f_(f), slope_(slope) {}

std::string ActivationLayer::name() const {
  switch (f_) {
    case Activation::kLeakyRelu: return "leaky_relu";
    case Activation::kRelu: return "relu";
    case Activation::kTanh: return "tanh";
    case Activation::kSigmoid: return "sigmoid";
  }
  return "activation";
}

Tensor ActivationLayer::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  Tensor y = ctx.Uninitialized(x.shape());
  ctx.backend->ActivationForward(f_, slope_, x.numel(), x.data(), y.data());
  cache->saved = {DerivativeFromInput() ? x : y};
  return y;
}

Tensor ActivationLayer::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                                 bool want_input_grad) {
  if (!want_input_grad) return Tensor();
  CHECK_EQ(cache.saved.size(), 1u) << name() << ": cache is not from this layer's Forward";
  const Tensor& saved = cache.saved[0];
  CHECK(dy.shape() == saved.shape()) << name() << ": dy " << dy.shape().ToString() << " vs "
                                     << saved.shape().ToString();
  Tensor dx = ctx.Uninitialized(dy.shape());
  const float* x = DerivativeFromInput() ? saved.data() : nullptr;
  const float* y = DerivativeFromInput() ? nullptr : saved.data();
  ctx.backend->ActivationBackward(f_, slope_, dy.numel(), x, y, dy.data(), dx.data());
  return dx;
}

std::unique_ptr<Layer> MakeLeakyRelu(float slope) {
  return std::make_unique<ActivationLayer>(Activation::kLeakyRelu, slope);
}
std::unique_ptr<Layer> MakeRelu() { return std::make_unique<ActivationLayer>(Activation::kRelu); }
std::unique_ptr<Layer> MakeTanh() { return std::make_unique<ActivationLayer>(Activation::kTanh); }
std::unique_ptr<Layer> MakeSigmoid() { return std::make_unique<ActivationLayer>(Activation::kSigmoid); }

}  // namespace gantry
