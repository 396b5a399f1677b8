#include "worker/optim/sgd.h"

namespace gantry {

Sgd::Sgd(float lr, float momentum, int64_t size, Device device)
    : lr_(lr), momentum_(momentum), velocity_(Tensor::Zeros(Shape{size}, DType::kF32, device)) {}

void Sgd::Step(Backend& backend, const Tensor& params, const Tensor& grads) {
  CHECK_EQ(params.numel(), velocity_.numel());
  CHECK_EQ(grads.numel(), velocity_.numel());
  const float lr = RateOfNextStep(lr_);
  ++step_;
  backend.SgdStep(params.numel(), lr, momentum_, grads.data(), params.data(), velocity_.data());
}

}  // namespace gantry
