// The Eigen-based reference CPU backend. Its methods are defined in one file per
// kind of op (gemm.cc, conv.cc over lowered_conv.cc, conv_lowering.cc and swap_leading_dims.cc, bias.cc,
// channel_affine.cc, activation.cc, elementwise.cc, dropout.cc, batchnorm.cc, loss.cc,
// optimizer_kernels.cc, bf16_copies.cc). Single-threaded: data parallelism comes from ranks, not threads.
// Mixed precision (MathPrecision) rounds the operands and runs the fp32 code, which is
// the reference definition of it. Scratch buffers are per thread, so one instance may
// serve several ranks running as threads. Faster backends derive from this one and
// override what they speed up.
#pragma once

#include "worker/tensor/backend.h"
#include "worker/tensor/cpu/lowered_conv.h"

namespace gantry {

class EigenCpuBackend : public Backend {
 public:
  // The default cap on the column matrix of the convolutions: 16M floats (64 MB).
  static constexpr int64_t kDefaultMaxColumnFloats = int64_t{16} << 20;

  std::string_view name() const override { return "eigen"; }
  std::string ProductPath(MathPrecision precision) const override;

  // Caps the convolutions' column buffer at `floats`: a chunk of samples lowered
  // together holds no more samples than fit (at least one), and fewer where a narrower
  // GEMM already runs well. Results do not depend on the chunking beyond fp32 round-off.
  void set_max_column_floats(int64_t floats);

  using Backend::Gemm;
  void Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;

  void ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) override;
  void ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) override;
  void ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) override;

  void AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) override;
  void ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) override;
  void ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale, const float* shift,
                     float* y) override;

  void ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) override;
  void ActivationBackward(Activation f, float slope, int64_t count, const float* x, const float* y,
                          const float* dy, float* dx) override;
  void Multiply(int64_t count, const float* a, const float* b, float* out) override;
  void Axpy(int64_t count, float alpha, const float* x, float* y) override;
  void Scale(int64_t count, float alpha, float* x) override;
  void Copy(int64_t count, const float* src, float* dst) override;

  void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask,
                      float* y) override;

  void BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) override;
  void BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean, const float* var,
                      float eps, const float* gamma, const float* beta, float* y) override;
  void BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy, const float* mean,
                         const float* var, float eps, const float* gamma, float* dx, float* dgamma,
                         float* dbeta) override;

  void BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                  const float* var, float eps, const float* gamma, const float* beta, Activation f,
                                  float slope, float* y) override;
  void BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                   const float* dy, const float* mean, const float* var, float eps,
                                   const float* gamma, Activation f, float slope, float* dx, float* dgamma,
                                   float* dbeta) override;
  void AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f, float slope,
                                float* y) override;

  double BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) override;
  double L1Loss(int64_t count, const float* pred, const float* target, float* dpred) override;

  void AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                const float* grad, float* param, float* m, float* v) override;
  void SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
               float* momentum_buf) override;

  void NarrowToBf16(int64_t count, const float* from, uint16_t* to) override;
  void WidenFromBf16(int64_t count, const uint16_t* from, float* to) override;
  void ToWireBf16(int64_t count, const float* grads, uint16_t* wire) override;
  bool UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) override;
  bool UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale, float* grads) override;

 private:
  // EigenGemm as the lowered convolutions' GEMM.
  LoweringGemm ReferenceGemm();
  void EigenGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
  // Samples per chunk of a convolution (1..batch), from the GEMM width wanted and the cap.
  int64_t ChunkSamples(const ConvProblem& p) const;

  int64_t max_column_floats_ = kDefaultMaxColumnFloats;
};

}  // namespace gantry
