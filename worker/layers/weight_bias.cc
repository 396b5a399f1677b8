#include "worker/layers/weight_bias.h"

namespace gantry {

void WeightBias::Bind(const std::string& layer, bool has_bias, std::span<const Tensor> params,
                      std::span<const Tensor> grads) {
  const size_t expected = has_bias ? 2 : 1;
  CHECK(params.size() == expected && grads.size() == expected) << layer << " binds " << expected << " params";
  weight = params[0];
  weight_grad = grads[0];
  if (has_bias) {
    bias = params[1];
    bias_grad = grads[1];
  }
}

std::vector<ParamSpec> WeightBiasSpecs(Shape weight_shape, int64_t fan_in, int64_t fan_out, bool has_bias,
                                       int64_t bias_size) {
  std::vector<ParamSpec> specs = {{"weight", std::move(weight_shape), Init::kGlorotUniform, fan_in, fan_out}};
  if (has_bias) specs.push_back({"bias", Shape{bias_size}, Init::kZeros});
  return specs;
}

}  // namespace gantry
