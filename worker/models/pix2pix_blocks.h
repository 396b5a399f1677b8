// The normalisation + activation that follows every convolution of the Pix2Pix networks
// (except the ones without a norm), shared by the U-Net and the PatchGAN.
#pragma once

#include <memory>
#include <vector>

#include "runspec/model_config.h"
#include "worker/layers/fused_activation.h"
#include "worker/layers/layer.h"

namespace gantry {

// --norm batch: one BatchNorm (the config's eps and momentum) with `f` fused into it, as
// the DCGAN does. --norm instance: InstanceNorm, then `f` as its own layer.
std::vector<std::unique_ptr<Layer>> NormThenActivation(const Pix2pixConfig& config, int64_t channels,
                                                       FusedActivation f);

inline FusedActivation LeakyRelu(const Pix2pixConfig& config) {
  return FusedActivation{Activation::kLeakyRelu, config.leaky_slope};
}
inline FusedActivation Relu() { return FusedActivation{Activation::kRelu, 0.0f}; }

}  // namespace gantry
