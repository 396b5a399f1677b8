#include "worker/models/pix2pix_blocks.h"

#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/instance_norm.h"

namespace gantry {

std::vector<std::unique_ptr<Layer>> NormThenActivation(const Pix2pixConfig& config, int64_t channels,
                                                       FusedActivation f) {
  std::vector<std::unique_ptr<Layer>> layers;
  if (config.norm == NormKind::kBatch) {
    layers.push_back(std::make_unique<BatchNorm>(channels, config.bn_eps, config.bn_momentum, f));
  } else {
    layers.push_back(std::make_unique<InstanceNorm>(channels, config.in_eps));
    layers.push_back(std::make_unique<ActivationLayer>(f.f, f.slope));
  }
  return layers;
}

}  // namespace gantry
