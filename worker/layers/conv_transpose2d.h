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
// scatters a weighted k*k patch per output channel, lowered to one Gemm per chunk of
// samples (their column matrices side by side, [out*k*k, samples*in_pixels]) and Col2Im
// per sample. output_padding (< stride) only grows the output on the bottom/right edge.
// Parameters (PyTorch layout): "weight" [in, out, k, k] (Glorot, fan_in = out*k*k,
// fan_out = in*k*k), then "bias" [out] (zeros) when `bias`.
class ConvTranspose2d final : public Layer {
 public:
  // The default cap on the column buffer: 16M floats (64 MB).
  static constexpr int64_t kDefaultMaxColumnFloats = int64_t{16} << 20;

  ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
                  int64_t output_padding, bool bias);

  // Caps the column buffer at `floats`: a chunk holds no more samples than fit (at least
  // one), and fewer where a narrower GEMM already runs well. Results do not depend on the
  // chunking beyond fp32 round-off.
  void set_max_column_floats(int64_t floats);

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
  // Samples per GEMM chunk (1..batch), from the GEMM width wanted and the column cap.
  int64_t ChunkSamples(const ConvGeometry& g, int64_t batch) const;

  int64_t in_, out_, kernel_, stride_, padding_, output_padding_;
  bool has_bias_;
  int64_t max_column_floats_ = kDefaultMaxColumnFloats;
  WeightBias p_;
  // Reused across calls: a chunk's column matrix, and (for chunks of 2 or more) its
  // input or input gradient channel-major, [in, samples, in_pixels], the layout the GEMM
  // reads and writes.
  Tensor cols_, channel_major_;
};

}  // namespace gantry
