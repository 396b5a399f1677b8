// Device-side helpers shared by the .cu files: launch geometry, the launch check, and
// the scalar activation math of worker/tensor/cpu/activation_math.h in device form.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/check.h"
#include "worker/tensor/cuda/cuda_kernels.h"

namespace gantry::cuda {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over `count` elements (at least one, at most 65535 x 16).
inline unsigned BlocksFor(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 1048560 ? 1048560 : blocks));
}

// Reports a bad launch at the launcher that made it.
#define GANTRY_CUDA_LAUNCHED(name)                                                                \
  do {                                                                                            \
    const cudaError_t gantry_launch_err_ = cudaGetLastError();                                    \
    CHECK(gantry_launch_err_ == cudaSuccess) << name << " launch: " << cudaGetErrorName(gantry_launch_err_) \
                                             << " (" << cudaGetErrorString(gantry_launch_err_) << ")";      \
  } while (0)

#define GRID_STRIDE(i, count) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (count); i += int64_t{gridDim.x} * blockDim.x)

// Overflow-free in both directions, as StableSigmoid.
__device__ inline float StableSigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}

__device__ inline float ApplyActivation(int f, float slope, float x) {
  switch (f) {
    case kLeakyRelu: return x > 0.0f ? x : slope * x;
    case kRelu: return x > 0.0f ? x : 0.0f;
    case kTanh: return tanhf(x);
    case kSigmoid: return StableSigmoid(x);
  }
  return x;
}

// f' at the input that gave output y.
__device__ inline float ActivationSlopeAtOutput(int f, float slope, float y) {
  switch (f) {
    case kLeakyRelu: return y > 0.0f ? 1.0f : slope;
    case kRelu: return y > 0.0f ? 1.0f : 0.0f;
    case kTanh: return 1.0f - y * y;
    case kSigmoid: return y * (1.0f - y);
  }
  return 1.0f;
}

// The sum of `v` over the block (blockDim.x a multiple of 32, at most 1024), valid in
// thread 0. Fixed order, so results are deterministic.
template <typename T>
__device__ inline T BlockSum(T v) {
  __shared__ T warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total += warp_sums[w];
  }
  return total;
}

}  // namespace gantry::cuda
