// 2-D convolution: x [N, in, H, W] -> y [N, out, (H + 2p - k)/s + 1, (W + 2p - k)/s + 1].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "worker/layers/layer.h"
#include "worker/layers/weight_bias.h"

namespace gantry {

// Square kernel, lowered to Im2Col + Gemm a chunk of samples at a time: the samples'
// column matrices sit side by side in one [in*k*k, samples*out_pixels] matrix, so one
// GEMM per chunk has a wide N even where a sample's output is only 7x7. Parameters
// (PyTorch layout): "weight" [out, in, k, k] (Glorot, fan_in = in*k*k, fan_out =
// out*k*k), then "bias" [out] (zeros) when `bias`.
class Conv2d final : public Layer {
 public:
  // The default cap on the column buffer: 16M floats (64 MB).
  static constexpr int64_t kDefaultMaxColumnFloats = int64_t{16} << 20;

  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
         bool bias);

  // Caps the column buffer at `floats`: a chunk holds no more samples than fit (at least
  // one), and fewer where a narrower GEMM already runs well. Results do not depend on the
  // chunking beyond fp32 round-off.
  void set_max_column_floats(int64_t floats);

  std::string name() const override { return "conv2d"; }
  Shape OutputShape(const Shape& input) const override;
  std::vector<ParamSpec> ParamSpecs() const override;
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;

  // Caches x only; Backward recomputes the column matrix rather than keeping k*k copies
  // of every input pixel alive between the passes.
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  ConvGeometry Geometry(const Shape& input) const;
  // Samples per GEMM chunk (1..batch), from the GEMM width wanted and the column cap.
  int64_t ChunkSamples(const ConvGeometry& g, int64_t batch) const;

  int64_t in_, out_, kernel_, stride_, padding_;
  bool has_bias_;
  int64_t max_column_floats_ = kDefaultMaxColumnFloats;
  WeightBias p_;
  // Reused across calls: a chunk's column matrix, and (for chunks of 2 or more) its
  // output or output gradient channel-major, [out, samples, out_pixels], the layout the
  // GEMM reads and writes.
  Tensor cols_, channel_major_;
};

}  // namespace gantry
