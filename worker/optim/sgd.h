// Stochastic gradient descent with (PyTorch-style) momentum, over a flat buffer.
#pragma once

#include "worker/optim/optimizer.h"

namespace gantry {

class Sgd final : public Optimizer {
 public:
  Sgd(float lr, float momentum, int64_t size, Device device = Device::kCpu);

  std::string name() const override { return "sgd"; }
  void Step(Backend& backend, const Tensor& params, const Tensor& grads) override;
  int64_t steps_taken() const override { return step_; }
  std::vector<Tensor> state() const override { return {velocity_}; }

 protected:
  void set_steps_taken(int64_t steps) override { step_ = steps; }

 private:
  float lr_;
  float momentum_;
  Tensor velocity_;
  int64_t step_ = 0;
};

}  // namespace gantry
