// Inverted dropout with the counter-based draw of worker/tensor/random.h (HashUniform:
// SplitMix64's finaliser of seed ^ Mix64(i)), restated for the device because that
// header's functions are host-only. Integer arithmetic and one exact float scaling, so
// the masks equal the CPU backend's bit for bit (the GPU tests compare them exactly).
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__device__ inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ inline float HashUniform(uint64_t seed, uint64_t index) {
  return static_cast<float>(Mix64(seed ^ Mix64(index)) >> 40) * (1.0f / 16777216.0f);
}

__global__ void DropoutKernel(int64_t count, float rate, float keep_scale, uint64_t seed, const float* x,
                              float* mask, float* y) {
  GRID_STRIDE(i, count) {
    const float m = HashUniform(seed, static_cast<uint64_t>(i)) < rate ? 0.0f : keep_scale;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace

void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y,
                    cudaStream_t stream) {
  if (count == 0) return;
  // The keep scale is computed on the host, as the reference does, so it is the same float.
  const float keep_scale = 1.0f / (1.0f - rate);
  DropoutKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, rate, keep_scale, seed, x, mask, y);
  GANTRY_CUDA_LAUNCHED("DropoutForward");
}

}  // namespace gantry::cuda
