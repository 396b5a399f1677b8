// Multiply, Axpy and Scale (Copy is a cudaMemcpyAsync in cuda_backend.cc).
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__global__ void MultiplyKernel(int64_t count, const float* a, const float* b, float* out) {
  GRID_STRIDE(i, count) { out[i] = a[i] * b[i]; }
}

__global__ void AxpyKernel(int64_t count, float alpha, const float* x, float* y) {
  GRID_STRIDE(i, count) { y[i] += alpha * x[i]; }
}

__global__ void ScaleKernel(int64_t count, float alpha, float* x) {
  GRID_STRIDE(i, count) { x[i] *= alpha; }
}

}  // namespace

void Multiply(int64_t count, const float* a, const float* b, float* out, cudaStream_t stream) {
  if (count == 0) return;
  MultiplyKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, a, b, out);
  GANTRY_CUDA_LAUNCHED("Multiply");
}

void Axpy(int64_t count, float alpha, const float* x, float* y, cudaStream_t stream) {
  if (count == 0) return;
  AxpyKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, alpha, x, y);
  GANTRY_CUDA_LAUNCHED("Axpy");
}

void Scale(int64_t count, float alpha, float* x, cudaStream_t stream) {
  if (count == 0) return;
  ScaleKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, alpha, x);
  GANTRY_CUDA_LAUNCHED("Scale");
}

}  // namespace gantry::cuda
