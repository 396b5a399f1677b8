#include "worker/optim/adam.h"

namespace gantry {

Adam::Adam(const AdamConfig& config, int64_t size, Device device)
    : config_(config),
      m_(Tensor::Zeros(Shape{size}, DType::kF32, device)),
      v_(Tensor::Zeros(Shape{size}, DType::kF32, device)) {}

void Adam::Step(Backend& backend, const Tensor& params, const Tensor& grads) {
  CHECK_EQ(params.numel(), m_.numel());
  CHECK_EQ(grads.numel(), m_.numel());
  const float lr = RateOfNextStep(config_.lr);
  ++step_;
  backend.AdamStep(params.numel(), lr, config_.beta1, config_.beta2, config_.eps, step_, grads.data(),
                   params.data(), m_.data(), v_.data());
}

}  // namespace gantry
