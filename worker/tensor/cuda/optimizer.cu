// Adam and SGD-with-momentum updates of flat buffers, as
// worker/tensor/cpu/optimizer_kernels.cc (the bias corrections come from the host).
#include "worker/tensor/cuda/kernel_common.cuh"

namespace gantry::cuda {
namespace {

__global__ void AdamKernel(int64_t count, float lr, float beta1, float beta2, float eps, float inv_c1,
                           float inv_sqrt_c2, const float* grad, float* param, float* m, float* v) {
  const float one_minus_b1 = 1.0f - beta1, one_minus_b2 = 1.0f - beta2;
  GRID_STRIDE(i, count) {
    const float g = grad[i];
    const float mi = beta1 * m[i] + one_minus_b1 * g;
    const float vi = beta2 * v[i] + one_minus_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] -= lr * (mi * inv_c1) / (sqrtf(vi) * inv_sqrt_c2 + eps);
  }
}

__global__ void SgdKernel(int64_t count, float lr, float momentum, const float* grad, float* param, float* buf) {
  GRID_STRIDE(i, count) {
    const float b = momentum * buf[i] + grad[i];
    buf[i] = b;
    param[i] -= lr * b;
  }
}

}  // namespace

void AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, float inv_c1, float inv_sqrt_c2,
              const float* grad, float* param, float* m, float* v, cudaStream_t stream) {
  if (count == 0) return;
  AdamKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, lr, beta1, beta2, eps, inv_c1, inv_sqrt_c2, grad,
                                                        param, m, v);
  GANTRY_CUDA_LAUNCHED("AdamStep");
}

void SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param, float* momentum_buf,
             cudaStream_t stream) {
  if (count == 0) return;
  SgdKernel<<<BlocksFor(count), kThreads, 0, stream>>>(count, lr, momentum, grad, param, momentum_buf);
  GANTRY_CUDA_LAUNCHED("SgdStep");
}

}  // namespace gantry::cuda
