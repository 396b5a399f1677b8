#include <cstring>

#include "common/vector_clones.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void MultiplyKernel(int64_t count, const float* a, const float* b, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = a[i] * b[i];
}

}  // namespace

void EigenCpuBackend::Multiply(int64_t count, const float* a, const float* b, float* out) {
  MultiplyKernel(count, a, b, out);
}

namespace {

GANTRY_VECTOR_CLONES
void AxpyKernel(int64_t count, float alpha, const float* x, float* y) {
  for (int64_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

}  // namespace

void EigenCpuBackend::Axpy(int64_t count, float alpha, const float* x, float* y) {
  AxpyKernel(count, alpha, x, y);
}

namespace {

GANTRY_VECTOR_CLONES
void ScaleKernel(int64_t count, float alpha, float* x) {
  for (int64_t i = 0; i < count; ++i) x[i] *= alpha;
}

}  // namespace

void EigenCpuBackend::Scale(int64_t count, float alpha, float* x) {
  ScaleKernel(count, alpha, x);
}

void EigenCpuBackend::Copy(int64_t count, const float* src, float* dst) {
  if (count > 0 && src != dst) std::memmove(dst, src, static_cast<size_t>(count) * sizeof(float));
}

}  // namespace gantry
