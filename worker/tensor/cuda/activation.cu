// Element-wise activations and their gradients (LeakyReLU and ReLU from x, Tanh and
// Sigmoid from y), as worker/tensor/cpu/activation.cc.
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__global__ void ForwardKernel(int f, float slope, int64_t count, const float* x, float* y) {
  GRID_STRIDE(i, count) { y[i] = ApplyActivation(f, slope, x[i]); }
}

__global__ void BackwardKernel(int f, float slope, int64_t count, const float* x, const float* y, const float* dy,
                               float* dx) {
  GRID_STRIDE(i, count) {
    switch (f) {
      case kLeakyRelu: dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i]; break;
      case kRelu: dx[i] = x[i] > 0.0f ? dy[i] : 0.0f; break;
      case kTanh: dx[i] = dy[i] * (1.0f - y[i] * y[i]); break;
      case kSigmoid: dx[i] = dy[i] * y[i] * (1.0f - y[i]); break;
    }
  }
}

}  // namespace

void ActivationForward(int f, float slope, int64_t count, const float* x, float* y, cudaStream_t stream) {
  if (count == 0) return;
  ForwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(f, slope, count, x, y);
  GANTRY_CUDA_LAUNCHED("ActivationForward");
}

void ActivationBackward(int f, float slope, int64_t count, const float* x, const float* y, const float* dy,
                        float* dx, cudaStream_t stream) {
  if (count == 0) return;
  BackwardKernel<<<BlocksFor(count), kThreads, 0, stream>>>(f, slope, count, x, y, dy, dx);
  GANTRY_CUDA_LAUNCHED("ActivationBackward");
}

}  // namespace gantry::cuda
