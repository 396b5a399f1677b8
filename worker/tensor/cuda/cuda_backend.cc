// The CudaBackend ops that map one to one onto a kernel launcher (cuda_kernels.h); the
// GEMM and the convolutions are in cuda_gemm.cc and cuda_conv.cc.
#include "worker/tensor/cuda/cuda_backend.h"

#include <cmath>

#include "worker/tensor/cuda/cuda_check.h"
#include "worker/tensor/cuda/cuda_kernels.h"
#include "worker/tensor/cuda/cuda_memory.h"
#include "worker/tensor/cuda/device_buffer.h"

namespace gantry {

std::string CudaBackend::ProductPath(MathPrecision precision) const {
  if (precision == MathPrecision::kFp32) return "cuBLAS fp32 kernels (TF32 off)";
  return "cuBLAS " + std::string(MathPrecisionName(precision)) + " tensor-core kernels, fp32 accumulation";
}

namespace {

cudaStream_t Stream() { return static_cast<cudaStream_t>(cuda::ComputeStream()); }

int Code(Activation f) { return static_cast<int>(f); }
static_assert(static_cast<int>(Activation::kLeakyRelu) == cuda::kLeakyRelu &&
              static_cast<int>(Activation::kRelu) == cuda::kRelu &&
              static_cast<int>(Activation::kTanh) == cuda::kTanh &&
              static_cast<int>(Activation::kSigmoid) == cuda::kSigmoid);

void CheckFusedSlope(Activation f, float slope) {
  CHECK(f != Activation::kLeakyRelu || slope >= 0.0f) << "fused LeakyReLU needs slope >= 0, got " << slope;
}

}  // namespace

Backend& TheCudaBackend() {
  static CudaBackend backend;
  return backend;
}

void CudaSynchronize() { GANTRY_CUDA_CHECK(cudaStreamSynchronize(Stream())); }

void CudaBackend::Synchronize() { CudaSynchronize(); }

void CudaBackend::NarrowToBf16(int64_t count, const float* from, uint16_t* to) {
  cuda::ToBf16(1, count, from, count, reinterpret_cast<__nv_bfloat16*>(to), Stream());
}

void CudaBackend::WidenFromBf16(int64_t count, const uint16_t* from, float* to) {
  cuda::WidenFromBf16(count, from, to, Stream());
}

void CudaBackend::ToWireBf16(int64_t count, const float* grads, uint16_t* wire) {
  cuda::ToWireBf16(count, grads, wire, Stream());
}

bool CudaBackend::UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) {
  return cuda::UnscaleAndCheckFinite(grads, count, inv_scale, Stream());
}

bool CudaBackend::UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale,
                                                float* grads) {
  return cuda::UnscaleFromBf16AndCheckFinite(wire, grads, count, inv_scale, Stream());
}

void CudaBackend::AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) {
  cuda::AddChannelBias(n, c, hw, bias, y, Stream());
}

void CudaBackend::ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  cuda::ChannelSum(n, c, hw, dy, out, Stream());
}

void CudaBackend::ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                                const float* shift, float* y) {
  cuda::ChannelAffine(n, c, hw, x, scale, shift, y, Stream());
}

void CudaBackend::AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f,
                                           float slope, float* y) {
  CheckFusedSlope(f, slope);
  cuda::AddChannelBiasActivation(n, c, hw, bias, Code(f), slope, y, Stream());
}

void CudaBackend::ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) {
  cuda::ActivationForward(Code(f), slope, count, x, y, Stream());
}

void CudaBackend::ActivationBackward(Activation f, float slope, int64_t count, const float* x, const float* y,
                                     const float* dy, float* dx) {
  const bool needs_x = f == Activation::kLeakyRelu || f == Activation::kRelu;
  CHECK(needs_x ? x != nullptr : y != nullptr) << "activation backward needs " << (needs_x ? "x" : "y");
  cuda::ActivationBackward(Code(f), slope, count, x, y, dy, dx, Stream());
}

void CudaBackend::Multiply(int64_t count, const float* a, const float* b, float* out) {
  cuda::Multiply(count, a, b, out, Stream());
}

void CudaBackend::Axpy(int64_t count, float alpha, const float* x, float* y) {
  cuda::Axpy(count, alpha, x, y, Stream());
}

void CudaBackend::Scale(int64_t count, float alpha, float* x) { cuda::Scale(count, alpha, x, Stream()); }

void CudaBackend::Copy(int64_t count, const float* src, float* dst) {
  if (count <= 0 || src == dst) return;
  GANTRY_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(count) * sizeof(float),
                                    cudaMemcpyDeviceToDevice, Stream()));
}

void CudaBackend::DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask,
                                 float* y) {
  CHECK(rate >= 0.0f && rate < 1.0f) << "dropout rate " << rate;
  cuda::DropoutForward(count, rate, seed, x, mask, y, Stream());
}

void CudaBackend::BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  CHECK_GT(n * hw, 0);
  cuda::BatchNormStats(n, c, hw, x, mean, var, Stream());
}

void CudaBackend::BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                 const float* var, float eps, const float* gamma, const float* beta, float* y) {
  cuda::BatchNormActivationForward(n, c, hw, x, mean, var, eps, gamma, beta, -1, 0.0f, y, Stream());
}

void CudaBackend::BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                    const float* mean, const float* var, float eps, const float* gamma, float* dx,
                                    float* dgamma, float* dbeta) {
  cuda::DeviceBuffer scratch(static_cast<size_t>(3 * c) * sizeof(float));
  cuda::BatchNormActivationBackward(n, c, hw, x, nullptr, dy, mean, var, eps, gamma, -1, 0.0f, dx, dgamma, dbeta,
                                    scratch.as<float>(), Stream());
}

void CudaBackend::BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                             const float* var, float eps, const float* gamma, const float* beta,
                                             Activation f, float slope, float* y) {
  CheckFusedSlope(f, slope);
  cuda::BatchNormActivationForward(n, c, hw, x, mean, var, eps, gamma, beta, Code(f), slope, y, Stream());
}

void CudaBackend::BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                              const float* dy, const float* mean, const float* var, float eps,
                                              const float* gamma, Activation f, float slope, float* dx,
                                              float* dgamma, float* dbeta) {
  CheckFusedSlope(f, slope);
  cuda::DeviceBuffer scratch(static_cast<size_t>(3 * c) * sizeof(float));
  cuda::BatchNormActivationBackward(n, c, hw, x, y, dy, mean, var, eps, gamma, Code(f), slope, dx, dgamma, dbeta,
                                    scratch.as<float>(), Stream());
}

double CudaBackend::BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) {
  CHECK_GT(count, 0);
  return cuda::BceWithLogits(count, logits, target, dlogits, Stream());
}

double CudaBackend::L1Loss(int64_t count, const float* pred, const float* target, float* dpred) {
  CHECK_GT(count, 0);
  return cuda::L1Loss(count, pred, target, dpred, Stream());
}

void CudaBackend::AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                           const float* grad, float* param, float* m, float* v) {
  // The bias corrections exactly as the reference computes them (double, once).
  const double c1 = 1.0 - std::pow(static_cast<double>(beta1), static_cast<double>(step));
  const double c2 = 1.0 - std::pow(static_cast<double>(beta2), static_cast<double>(step));
  cuda::AdamStep(count, lr, beta1, beta2, eps, static_cast<float>(1.0 / c1), static_cast<float>(1.0 / std::sqrt(c2)),
                 grad, param, m, v, Stream());
}

void CudaBackend::SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
                          float* momentum_buf) {
  cuda::SgdStep(count, lr, momentum, grad, param, momentum_buf, Stream());
}

}  // namespace gantry
