#include "worker/tensor/cpu/cpu_backend.h"
#include "common/vector_clones.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void ChannelAffineKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale, const float* shift,
                         float* y) {
  // Each element is read once before its own slot is written, so y may alias x.
  for (int64_t i = 0; i < n; ++i) {
    if (hw == 1) {
      // [n, c]: the channels of one row are contiguous.
      const float* xi = x + i * c;
      float* yi = y + i * c;
      for (int64_t ch = 0; ch < c; ++ch) yi[ch] = xi[ch] * scale[ch] + shift[ch];
      continue;
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float s = scale[ch], b = shift[ch];
      const float* xr = x + (i * c + ch) * hw;
      float* yr = y + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) yr[k] = xr[k] * s + b;
    }
  }
}

}  // namespace

void EigenCpuBackend::ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                                    const float* shift, float* y) {
  ChannelAffineKernel(n, c, hw, x, scale, shift, y);
}

}  // namespace gantry
