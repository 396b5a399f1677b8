// Per-channel bias, bias + activation, channel sums and the channel affine map, x
// viewed as [n, c, hw].
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__global__ void AddChannelBiasKernel(int64_t n, int64_t c, int64_t hw, const float* bias, int f, float slope,
                                     float* y) {
  GRID_STRIDE(i, n * c * hw) {
    const float v = y[i] + bias[(i / hw) % c];
    y[i] = f < 0 ? v : ApplyActivation(f, slope, v);
  }
}

// One block per channel; the channel's n * hw terms summed in double in a fixed order.
__global__ void ChannelSumKernel(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  const int64_t ch = blockIdx.x;
  double sum = 0.0;
  for (int64_t t = threadIdx.x; t < n * hw; t += blockDim.x) {
    sum += dy[((t / hw) * c + ch) * hw + t % hw];
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) out[ch] += static_cast<float>(sum);
}

__global__ void ChannelAffineKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                                    const float* shift, float* y) {
  GRID_STRIDE(i, n * c * hw) {
    const int64_t ch = (i / hw) % c;
    y[i] = x[i] * scale[ch] + shift[ch];
  }
}

}  // namespace

void AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y, cudaStream_t stream) {
  if (n * c * hw == 0) return;
  AddChannelBiasKernel<<<BlocksFor(n * c * hw), kThreads, 0, stream>>>(n, c, hw, bias, -1, 0.0f, y);
  GANTRY_CUDA_LAUNCHED("AddChannelBias");
}

void AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, int f, float slope, float* y,
                              cudaStream_t stream) {
  if (n * c * hw == 0) return;
  AddChannelBiasKernel<<<BlocksFor(n * c * hw), kThreads, 0, stream>>>(n, c, hw, bias, f, slope, y);
  GANTRY_CUDA_LAUNCHED("AddChannelBiasActivation");
}

void ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out, cudaStream_t stream) {
  if (c == 0) return;
  CHECK_LE(c, int64_t{1} << 31) << "channels";
  ChannelSumKernel<<<static_cast<unsigned>(c), kThreads, 0, stream>>>(n, c, hw, dy, out);
  GANTRY_CUDA_LAUNCHED("ChannelSum");
}

void ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale, const float* shift, float* y,
                   cudaStream_t stream) {
  if (n * c * hw == 0) return;
  ChannelAffineKernel<<<BlocksFor(n * c * hw), kThreads, 0, stream>>>(n, c, hw, x, scale, shift, y);
  GANTRY_CUDA_LAUNCHED("ChannelAffine");
}

}  // namespace gantry::cuda
