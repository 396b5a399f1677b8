// The loss scaler's unscale + found-inf pass (worker/tensor/cpu/gradient_unscale.h) on
// device buffers: grads *= inv_scale (or widened from bf16 wire bits first), and a flag
// set when any result's exponent is all ones, the same test as the CPU's NonFinite, so
// ranks agree on the outcome whichever backend ran it.
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__device__ inline bool NonFinite(float x) {
  constexpr uint32_t kExponent = 0x7f800000u;
  return (__float_as_uint(x) & kExponent) == kExponent;
}

__global__ void UnscaleKernel(const uint16_t* wire, float* grads, int64_t count, float inv_scale, int* bad) {
  bool any = false;
  GRID_STRIDE(i, count) {
    const float g = wire != nullptr ? __uint_as_float(static_cast<uint32_t>(wire[i]) << 16) : grads[i];
    const float y = g * inv_scale;
    grads[i] = y;
    any |= NonFinite(y);
  }
  // One write per warp at most: a benign race (every writer stores 1).
  if (__any_sync(0xffffffffu, any) && threadIdx.x % 32 == 0) *bad = 1;
}

bool Run(const uint16_t* wire, float* grads, int64_t count, float inv_scale, cudaStream_t stream) {
  thread_local int* bad = [] {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, sizeof(int));
    CHECK(err == cudaSuccess) << "cudaMalloc(found-inf flag): " << cudaGetErrorString(err);
    return static_cast<int*>(p);
  }();
  CHECK(cudaMemsetAsync(bad, 0, sizeof(int), stream) == cudaSuccess) << "found-inf flag reset";
  if (count > 0) {
    UnscaleKernel<<<BlocksFor(count), kThreads, 0, stream>>>(wire, grads, count, inv_scale, bad);
    GANTRY_CUDA_LAUNCHED("UnscaleAndCheckFinite");
  }
  int host_bad = 0;
  CHECK(cudaMemcpyAsync(&host_bad, bad, sizeof(int), cudaMemcpyDeviceToHost, stream) == cudaSuccess)
      << "found-inf flag copy-back";
  const cudaError_t sync = cudaStreamSynchronize(stream);
  CHECK(sync == cudaSuccess) << "UnscaleAndCheckFinite: " << cudaGetErrorName(sync) << " ("
                             << cudaGetErrorString(sync) << ")";
  return host_bad == 0;
}

}  // namespace

bool UnscaleAndCheckFinite(float* grads, int64_t count, float inv_scale, cudaStream_t stream) {
  return Run(nullptr, grads, count, inv_scale, stream);
}

bool UnscaleFromBf16AndCheckFinite(const uint16_t* wire, float* grads, int64_t count, float inv_scale,
                                   cudaStream_t stream) {
  return Run(wire, grads, count, inv_scale, stream);
}

}  // namespace gantry::cuda
