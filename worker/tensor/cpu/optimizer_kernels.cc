#include <cmath>

#include "common/vector_clones.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void AdamStepKernel(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step, const float* grad,
                    float* param, float* m, float* v) {
  // One pass over the four buffers, vectorised (worker/CMakeLists.txt builds this file
  // without errno from sqrt; distinct buffers, as FlatParameters hands them over).
  // Bias corrections folded into the step size and epsilon, computed in double once.
  const double c1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double c2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  const float inv_c1 = static_cast<float>(1.0 / c1);
  const float inv_sqrt_c2 = static_cast<float>(1.0 / std::sqrt(c2));
  const float one_minus_b1 = 1.0f - beta1;
  const float one_minus_b2 = 1.0f - beta2;
  for (int64_t i = 0; i < count; ++i) {
    const float g = grad[i];
    const float mi = beta1 * m[i] + one_minus_b1 * g;
    const float vi = beta2 * v[i] + one_minus_b2 * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] -= lr * (mi * inv_c1) / (std::sqrt(vi) * inv_sqrt_c2 + eps);
  }
}

}  // namespace

void EigenCpuBackend::AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                               const float* grad, float* param, float* m, float* v) {
  AdamStepKernel(count, lr, beta1, beta2, eps, step, grad, param, m, v);
}

namespace {

GANTRY_VECTOR_CLONES
void SgdStepKernel(int64_t count, float lr, float momentum, const float* grad, float* param, float* momentum_buf) {
  for (int64_t i = 0; i < count; ++i) {
    const float b = momentum * momentum_buf[i] + grad[i];
    momentum_buf[i] = b;
    param[i] -= lr * b;
  }
}

}  // namespace

void EigenCpuBackend::SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
                              float* momentum_buf) {
  SgdStepKernel(count, lr, momentum, grad, param, momentum_buf);
}

}  // namespace gantry
