// Fully connected layer: x [N, in] -> y [N, out] = x W^T + b.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "worker/layers/layer.h"
#include "worker/layers/weight_bias.h"

namespace gantry {

// Parameters (PyTorch layout): "weight" [out, in] (Glorot, fan_in = in, fan_out = out),
// then "bias" [out] (zeros) when `bias`.
class Linear final : public Layer {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias);

  std::string name() const override { return "linear"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;

  // Caches x.
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  int64_t in_;
  int64_t out_;
  bool has_bias_;
  WeightBias p_;
};

}  // namespace gantry
