#include "tests/testing/backend_ops/recording_backend.h"

namespace gantry::testing {

void RecordingBackend::Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                            int64_t ldc) {
  Record("Gemm");
  inner_.Gemm(precision, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void RecordingBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  Record("ConvForward");
  inner_.ConvForward(p, x, w, y);
}

void RecordingBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  Record("ConvBackwardData");
  inner_.ConvBackwardData(p, dy, w, dx);
}

void RecordingBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  Record("ConvBackwardWeights");
  inner_.ConvBackwardWeights(p, x, dy, dw);
}

void RecordingBackend::ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                                    float* dw) {
  Record("ConvBackward");
  inner_.ConvBackward(p, x, dy, w, dx, dw);
}

void RecordingBackend::ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w,
                                             float* dx, float* dw) {
  Record("ConvTransposeBackward");
  inner_.ConvTransposeBackward(p, g, x, w, dx, dw);
}

void RecordingBackend::AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) {
  Record("AddChannelBias");
  inner_.AddChannelBias(n, c, hw, bias, y);
}

void RecordingBackend::ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  Record("ChannelSum");
  inner_.ChannelSum(n, c, hw, dy, out);
}

void RecordingBackend::ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                                     const float* shift, float* y) {
  Record("ChannelAffine");
  inner_.ChannelAffine(n, c, hw, x, scale, shift, y);
}

void RecordingBackend::ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) {
  Record("ActivationForward");
  inner_.ActivationForward(f, slope, count, x, y);
}

void RecordingBackend::ActivationBackward(Activation f, float slope, int64_t count, const float* x, const float* y,
                                          const float* dy, float* dx) {
  Record("ActivationBackward");
  inner_.ActivationBackward(f, slope, count, x, y, dy, dx);
}

void RecordingBackend::Multiply(int64_t count, const float* a, const float* b, float* out) {
  Record("Multiply");
  inner_.Multiply(count, a, b, out);
}

void RecordingBackend::Axpy(int64_t count, float alpha, const float* x, float* y) {
  Record("Axpy");
  inner_.Axpy(count, alpha, x, y);
}

void RecordingBackend::Scale(int64_t count, float alpha, float* x) {
  Record("Scale");
  inner_.Scale(count, alpha, x);
}

void RecordingBackend::Copy(int64_t count, const float* src, float* dst) {
  Record("Copy");
  inner_.Copy(count, src, dst);
}

void RecordingBackend::DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y) {
  Record("DropoutForward");
  inner_.DropoutForward(count, rate, seed, x, mask, y);
}

void RecordingBackend::BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  Record("BatchNormStats");
  inner_.BatchNormStats(n, c, hw, x, mean, var);
}

void RecordingBackend::BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                      const float* var, float eps, const float* gamma, const float* beta, float* y) {
  Record("BatchNormApply");
  inner_.BatchNormApply(n, c, hw, x, mean, var, eps, gamma, beta, y);
}

void RecordingBackend::BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                         const float* mean, const float* var, float eps, const float* gamma, float* dx,
                                         float* dgamma, float* dbeta) {
  Record("BatchNormBackward");
  inner_.BatchNormBackward(n, c, hw, x, dy, mean, var, eps, gamma, dx, dgamma, dbeta);
}

void RecordingBackend::BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                                  const float* var, float eps, const float* gamma, const float* beta,
                                                  Activation f, float slope, float* y) {
  Record("BatchNormActivationForward");
  inner_.BatchNormActivationForward(n, c, hw, x, mean, var, eps, gamma, beta, f, slope, y);
}

void RecordingBackend::BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                                   const float* dy, const float* mean, const float* var, float eps,
                                                   const float* gamma, Activation f, float slope, float* dx,
                                                   float* dgamma, float* dbeta) {
  Record("BatchNormActivationBackward");
  inner_.BatchNormActivationBackward(n, c, hw, x, y, dy, mean, var, eps, gamma, f, slope, dx, dgamma, dbeta);
}

void RecordingBackend::AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f,
                                                float slope, float* y) {
  Record("AddChannelBiasActivation");
  inner_.AddChannelBiasActivation(n, c, hw, bias, f, slope, y);
}

double RecordingBackend::BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) {
  Record("BceWithLogits");
  return inner_.BceWithLogits(count, logits, target, dlogits);
}

double RecordingBackend::L1Loss(int64_t count, const float* pred, const float* target, float* dpred) {
  Record("L1Loss");
  return inner_.L1Loss(count, pred, target, dpred);
}

void RecordingBackend::AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                                const float* grad, float* param, float* m, float* v) {
  Record("AdamStep");
  inner_.AdamStep(count, lr, beta1, beta2, eps, step, grad, param, m, v);
}

void RecordingBackend::SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
                               float* momentum_buf) {
  Record("SgdStep");
  inner_.SgdStep(count, lr, momentum, grad, param, momentum_buf);
}

void RecordingBackend::NarrowToBf16(int64_t count, const float* from, uint16_t* to) {
  Record("NarrowToBf16");
  inner_.NarrowToBf16(count, from, to);
}

void RecordingBackend::WidenFromBf16(int64_t count, const uint16_t* from, float* to) {
  Record("WidenFromBf16");
  inner_.WidenFromBf16(count, from, to);
}

void RecordingBackend::ToWireBf16(int64_t count, const float* grads, uint16_t* wire) {
  Record("ToWireBf16");
  inner_.ToWireBf16(count, grads, wire);
}

bool RecordingBackend::UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) {
  Record("UnscaleAndCheckFinite");
  return inner_.UnscaleAndCheckFinite(count, inv_scale, grads);
}

bool RecordingBackend::UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale,
                                                     float* grads) {
  Record("UnscaleFromBf16AndCheckFinite");
  return inner_.UnscaleFromBf16AndCheckFinite(count, wire, inv_scale, grads);
}

}  // namespace gantry::testing
