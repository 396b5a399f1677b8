// Transposed 2-D convolution: x [N, in, H, W] -> y [N, out, (H-1)*s - 2p + k + op, (W-1)*s - 2p + k + op].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "worker/layers/layer.h"
#include "worker/layers/weight_bias.h"

namespace gantry {

// The adjoint of Conv2d(out, in, k, s, p) (PyTorch's ConvTranspose2d): every input pixel
// scatters a weighted k*k patch per output channel. The arithmetic is the backend's
// convolution ops on that Conv2d's problem (see worker/tensor/conv_problem.h): forward is
// ConvBackwardData, the input gradient ConvForward, the weight gradient
// ConvBackwardWeights. output_padding (< stride) only grows the output on the
// bottom/right edge. Parameters (PyTorch layout): "weight" [in, out, k, k] (Glorot,
// fan_in = out*k*k, fan_out = in*k*k), then "bias" [out] (zeros) when `bias`.
class ConvTranspose2d final : public Layer {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
                  int64_t output_padding, bool bias);

  std::string name() const override { return "conv_transpose2d"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;

  // Caches x.
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  // The adjoint convolution's problem for a batch of `input` (this layer's input is its
  // output side; CHECK-fails on a shape mismatch).
  ConvProblem Problem(const Shape& input, MathPrecision precision) const;

  int64_t in_, out_, kernel_, stride_, padding_, output_padding_;
  bool has_bias_;
  WeightBias p_;
};

}  // namespace gantry
