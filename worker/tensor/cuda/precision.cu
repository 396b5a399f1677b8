// Operand rounding for the mixed-precision GEMMs and convolutions: fp32 -> bf16 / fp16,
// round to nearest even. cuda_bf16.h's and cuda_fp16.h's _rn conversions round exactly
// as common/bf16.h and common/fp16.h do (ties to even, through subnormals, overflow to
// Inf); only a NaN's payload may differ, and a NaN operand gives NaN either way.
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

template <typename T>
__device__ inline T Round(float x);
template <>
__device__ inline __nv_bfloat16 Round(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ inline __half Round(float x) { return __float2half_rn(x); }

template <typename T>
__global__ void RoundMatrixKernel(int64_t rows, int64_t cols, const float* src, int64_t ld, T* dst) {
  GRID_STRIDE(i, rows * cols) {
    const int64_t r = i / cols, c = i % cols;
    dst[i] = Round<T>(src[r * ld + c]);
  }
}

__global__ void ScaleMatrixKernel(int64_t rows, int64_t cols, float beta, float* c, int64_t ldc) {
  GRID_STRIDE(i, rows * cols) {
    float& v = c[(i / cols) * ldc + i % cols];
    v = beta == 0.0f ? 0.0f : v * beta;
  }
}

__global__ void WidenKernel(int64_t count, const uint16_t* from, float* to) {
  GRID_STRIDE(i, count) { to[i] = __uint_as_float(static_cast<uint32_t>(from[i]) << 16); }
}

// The integer form of WireBf16, so the bits match the CPU's on every input.
__global__ void WireKernel(int64_t count, const float* grads, uint16_t* wire) {
  GRID_STRIDE(i, count) {
    const uint32_t u = __float_as_uint(grads[i]);
    uint16_t b;
    if ((u & 0x7f800000u) == 0) {
      b = static_cast<uint16_t>((u >> 16) & 0x8000u);
    } else if ((u & 0x7fffffffu) > 0x7f800000u) {
      b = static_cast<uint16_t>((u >> 16) | 0x0040u);
    } else {
      b = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    wire[i] = b;
  }
}

}  // namespace

void WidenFromBf16(int64_t count, const uint16_t* from, float* to, cudaStream_t stream) {
  if (count <= 0) return;
  WidenKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, from, to);
  GANTRY_CUDA_LAUNCHED("WidenFromBf16");
}

void ToWireBf16(int64_t count, const float* grads, uint16_t* wire, cudaStream_t stream) {
  if (count <= 0) return;
  WireKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, grads, wire);
  GANTRY_CUDA_LAUNCHED("ToWireBf16");
}

void ToBf16(int64_t rows, int64_t cols, const float* src, int64_t ld, __nv_bfloat16* dst, cudaStream_t stream) {
  if (rows * cols == 0) return;
  RoundMatrixKernel<<<BlocksFor(rows * cols), kThreads, 0, stream>>>(rows, cols, src, ld, dst);
  GANTRY_CUDA_LAUNCHED("ToBf16");
}

void ToFp16(int64_t rows, int64_t cols, const float* src, int64_t ld, __half* dst, cudaStream_t stream) {
  if (rows * cols == 0) return;
  RoundMatrixKernel<<<BlocksFor(rows * cols), kThreads, 0, stream>>>(rows, cols, src, ld, dst);
  GANTRY_CUDA_LAUNCHED("ToFp16");
}

void ScaleMatrix(int64_t rows, int64_t cols, float beta, float* c, int64_t ldc, cudaStream_t stream) {
  if (rows * cols == 0) return;
  ScaleMatrixKernel<<<BlocksFor(rows * cols), kThreads, 0, stream>>>(rows, cols, beta, c, ldc);
  GANTRY_CUDA_LAUNCHED("ScaleMatrix");
}

}  // namespace gantry::cuda
