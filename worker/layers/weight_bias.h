// The parameters of a Linear or convolution layer: a weight and an optional bias, as
// views into the network's flat parameter and gradient buffers.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "worker/layers/layer.h"

namespace gantry {

struct WeightBias {
  Tensor weight, weight_grad;
  Tensor bias, bias_grad;  // undefined without a bias

  // Takes the views (weight, then bias when has_bias); CHECKs their count, naming `layer`.
  void Bind(const std::string& layer, bool has_bias, std::span<const Tensor> params, std::span<const Tensor> grads);
};

// "weight" of `weight_shape` (Glorot-uniform with the given fans), then "bias"
// [bias_size] (zeros) when has_bias.
std::vector<ParamSpec> WeightBiasSpecs(Shape weight_shape, int64_t fan_in, int64_t fan_out, bool has_bias,
                                       int64_t bias_size);

}  // namespace gantry
