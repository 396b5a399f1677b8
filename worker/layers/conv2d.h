// 2-D convolution: x [N, in, H, W] -> y [N, out, (H + 2p - k)/s + 1, (W + 2p - k)/s + 1].
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "worker/layers/fused_activation.h"
#include "worker/layers/layer.h"
#include "worker/layers/weight_bias.h"

namespace gantry {

// Square kernel; the arithmetic is the backend's ConvForward / ConvBackwardData /
// ConvBackwardWeights at ctx.precision. Parameters (PyTorch layout): "weight"
// [out, in, k, k] (Glorot, fan_in = in*k*k, fan_out = out*k*k), then "bias" [out]
// (zeros) when `bias`. A fused activation makes the output f(conv(x) + bias), with the
// bias and activation in one pass (Backend::AddChannelBiasActivation).
class Conv2d final : public Layer {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
         bool bias, std::optional<FusedActivation> activation = std::nullopt);

  std::string name() const override { return "conv2d"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;

  // Caches x (and the output, with a fused activation).
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  // The backend's problem for a batch of `input` (CHECK-fails on a shape mismatch).
  ConvProblem Problem(const Shape& input, MathPrecision precision) const;

  int64_t in_, out_, kernel_, stride_, padding_;
  bool has_bias_;
  std::optional<FusedActivation> activation_;
  WeightBias p_;
};

}  // namespace gantry
