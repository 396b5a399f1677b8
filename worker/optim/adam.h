// Adam (Kingma & Ba) with bias correction, over a flat buffer.
#pragma once

#include "worker/optim/optimizer.h"

namespace gantry {

struct AdamConfig {
  float lr = 1e-4f;
  float beta1 = 0.5f;
  float beta2 = 0.999f;
  float eps = 1e-7f;
};

class Adam final : public Optimizer {
 public:
  // State buffers of `size` on `device` (where the parameters are).
  Adam(const AdamConfig& config, int64_t size, Device device = Device::kCpu);

  std::string name() const override { return "adam"; }
  void Step(Backend& backend, const Tensor& params, const Tensor& grads) override;
  int64_t steps_taken() const override { return step_; }
  std::vector<Tensor> state() const override { return {m_, v_}; }

 protected:
  void set_steps_taken(int64_t steps) override { step_ = steps; }

 private:
  AdamConfig config_;
  Tensor m_;  // first moment
  Tensor v_;  // second moment
  int64_t step_ = 0;
};

}  // namespace gantry
