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
// scatters a weighted k*k patch per output channel, lowered to Gemm + Col2Im per sample.
// output_padding (< stride) only grows the output on the bottom/right edge.
// Parameters (PyTorch layout): "weight" [in, out, k, k] (Glorot, fan_in = out*k*k,
// fan_out = in*k*k), then "bias" [out] (zeros) when `bias`.
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
  // The lowering geometry: the image is the output, the column side the input.
  ConvGeometry Geometry(const Shape& input) const;
  float* Scratch(int64_t numel);

  int64_t in_, out_, kernel_, stride_, padding_, output_padding_;
  bool has_bias_;
  WeightBias p_;
  Tensor cols_;  // per-sample column matrix, reused across calls
};

}  // namespace gantry
