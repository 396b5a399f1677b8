// im2col / col2im over a chunk of samples and the NCHW <-> channel-major swap, the
// data movement around the convolutions' GEMMs (conv.cc). One thread per output
// element; col2im gathers, so the result does not depend on scheduling.
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

template <typename T>
__global__ void Im2ColKernel(Lowering g, int64_t m, const T* images, bool wide, T* cols) {
  const int64_t pixels = g.out_height * g.out_width;
  const int64_t rows = g.channels * g.kernel * g.kernel;
  const int64_t image_size = g.channels * g.height * g.width;
  GRID_STRIDE(i, m * rows * pixels) {
    // i enumerates (j, r, p): sample, column-matrix row, output pixel.
    const int64_t p = i % pixels, r = (i / pixels) % rows, j = i / (pixels * rows);
    const int64_t kx = r % g.kernel, ky = (r / g.kernel) % g.kernel, ch = r / (g.kernel * g.kernel);
    const int64_t oy = p / g.out_width, ox = p % g.out_width;
    const int64_t iy = oy * g.stride - g.padding + ky, ix = ox * g.stride - g.padding + kx;
    T v = T(0.0f);
    if (iy >= 0 && iy < g.height && ix >= 0 && ix < g.width) {
      v = images[j * image_size + (ch * g.height + iy) * g.width + ix];
    }
    const int64_t at = wide ? r * (m * pixels) + j * pixels + p : i;
    cols[at] = v;
  }
}

__global__ void Col2ImKernel(Lowering g, int64_t m, const float* cols, float* images) {
  const int64_t pixels = g.out_height * g.out_width;
  const int64_t rows = g.channels * g.kernel * g.kernel;
  const int64_t image_size = g.channels * g.height * g.width;
  GRID_STRIDE(i, m * image_size) {
    const int64_t x = i % g.width, y = (i / g.width) % g.height, ch = (i / (g.width * g.height)) % g.channels;
    const int64_t j = i / image_size;
    const float* block = cols + j * rows * pixels;
    float sum = 0.0f;
    // Taps (ky, kx) with y = oy*stride - padding + ky for some output row oy in range.
    for (int64_t ky = 0; ky < g.kernel; ++ky) {
      const int64_t ty = y + g.padding - ky;
      if (ty < 0 || ty % g.stride != 0 || ty / g.stride >= g.out_height) continue;
      const int64_t oy = ty / g.stride;
      for (int64_t kx = 0; kx < g.kernel; ++kx) {
        const int64_t tx = x + g.padding - kx;
        if (tx < 0 || tx % g.stride != 0 || tx / g.stride >= g.out_width) continue;
        const int64_t ox = tx / g.stride;
        const int64_t r = (ch * g.kernel + ky) * g.kernel + kx;
        sum += block[r * pixels + oy * g.out_width + ox];
      }
    }
    images[i] = sum;
  }
}

template <typename T>
__global__ void SwapKernel(int64_t a, int64_t b, int64_t p, const T* src, T* dst) {
  GRID_STRIDE(i, a * b * p) {
    // i indexes src [a, b, p].
    const int64_t q = i % p, jb = (i / p) % b, ja = i / (p * b);
    dst[(jb * a + ja) * p + q] = src[i];
  }
}

}  // namespace

template <typename T>
void Im2Col(const Lowering& g, int64_t m, const T* images, bool wide, T* cols, cudaStream_t stream) {
  const int64_t total = m * g.channels * g.kernel * g.kernel * g.out_height * g.out_width;
  if (total == 0) return;
  Im2ColKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(g, m, images, wide, cols);
  GANTRY_CUDA_LAUNCHED("Im2Col");
}
template void Im2Col<float>(const Lowering&, int64_t, const float*, bool, float*, cudaStream_t);
template void Im2Col<__nv_bfloat16>(const Lowering&, int64_t, const __nv_bfloat16*, bool, __nv_bfloat16*,
                                    cudaStream_t);
template void Im2Col<__half>(const Lowering&, int64_t, const __half*, bool, __half*, cudaStream_t);

void Col2Im(const Lowering& g, int64_t m, const float* cols, float* images, cudaStream_t stream) {
  const int64_t total = m * g.channels * g.height * g.width;
  if (total == 0) return;
  Col2ImKernel<<<BlocksFor(total), kThreads, 0, stream>>>(g, m, cols, images);
  GANTRY_CUDA_LAUNCHED("Col2Im");
}

template <typename T>
void SwapLeadingDims(int64_t a, int64_t b, int64_t p, const T* src, T* dst, cudaStream_t stream) {
  if (a * b * p == 0) return;
  SwapKernel<T><<<BlocksFor(a * b * p), kThreads, 0, stream>>>(a, b, p, src, dst);
  GANTRY_CUDA_LAUNCHED("SwapLeadingDims");
}
template void SwapLeadingDims<float>(int64_t, int64_t, int64_t, const float*, float*, cudaStream_t);
template void SwapLeadingDims<__nv_bfloat16>(int64_t, int64_t, int64_t, const __nv_bfloat16*, __nv_bfloat16*,
                                             cudaStream_t);
template void SwapLeadingDims<__half>(int64_t, int64_t, int64_t, const __half*, __half*, cudaStream_t);

}  // namespace gantry::cuda
