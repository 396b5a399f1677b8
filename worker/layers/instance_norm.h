// Instance normalisation: [N, C, H, W] -> [N, C, H, W], each (sample, channel) plane
// normalised by its own mean and biased variance (torch.nn.InstanceNorm2d with its
// defaults: affine=False, track_running_stats=False).
#pragma once

#include "worker/layers/layer.h"

namespace gantry {

// No parameters and no running statistics, so training and inference compute the same
// function and a sample's output never depends on the other samples of its batch (nor on
// the data-parallel split: sync-BN does not apply). The arithmetic is the backend's
// BatchNorm kernels on x viewed as [1, N*C, H*W], which are instance statistics; it
// therefore runs on every backend. Needs more than one value per plane (H*W > 1): a 1x1
// plane normalises to 0.
class InstanceNorm final : public Layer {
 public:
  explicit InstanceNorm(int64_t channels, float eps = 1e-5f);

  std::string name() const override { return "instance_norm"; }
  Shape OutputShape(const Shape& input) const override;

  // Caches x and its per-plane mean and variance.
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  int64_t channels_;
  float eps_;
};

}  // namespace gantry
