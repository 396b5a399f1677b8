// A Backend that forwards every op to another one and adds up the calling thread's CPU
// time per op and operand shape: where a training step's time goes, op by op and layer by
// layer (a convolution's shape names its layer). For benchmarks only.
//
// CPU time of the thread, not wall time: on a shared machine the other processes' slices
// do not count, so the breakdown holds up under load. Time outside the backend (tensor
// allocation, the all-reduce, the layers' own bookkeeping) is what a caller's step time
// minus Total() leaves.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "worker/tensor/backend.h"

namespace gantry {

class ProfilingBackend final : public Backend {
 public:
  struct Entry {
    std::string key;  // "<op> <shape>"
    int64_t calls = 0;
    double cpu_s = 0;
    double macs = 0;  // multiply-adds of the products (convolutions, GEMMs), summed over calls
  };

  explicit ProfilingBackend(Backend& inner) : inner_(inner) {}

  // Forgets what was timed so far (e.g. the warm-up steps).
  void Reset() { entries_.clear(); }
  // Every op and shape timed since Reset, the most expensive first.
  std::vector<Entry> Entries() const;
  double TotalSeconds() const;

  std::string_view name() const override { return inner_.name(); }
  Device device() const override { return inner_.device(); }
  void Synchronize() override { inner_.Synchronize(); }
  std::string ProductPath(MathPrecision precision) const override { return inner_.ProductPath(precision); }

  using Backend::Gemm;
  void Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) override;
  void ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) override;
  void ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) override;
  void ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) override;
  // Timed as one op ("conv-bwd-both", "convt-bwd-both"): the passes may share work.
  void ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                    float* dw) override;
  void ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w, float* dx,
                             float* dw) override;
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
  void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y) override;
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
  void AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step, const float* grad,
                float* param, float* m, float* v) override;
  void SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
               float* momentum_buf) override;
  void NarrowToBf16(int64_t count, const float* from, uint16_t* to) override;
  void WidenFromBf16(int64_t count, const uint16_t* from, float* to) override;
  void ToWireBf16(int64_t count, const float* grads, uint16_t* wire) override;
  bool UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) override;
  bool UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale, float* grads) override;

 private:
  // Runs `op` and charges its thread CPU time to `key`.
  template <typename Op>
  auto Timed(const std::string& key, Op op, double macs = 0);

  Backend& inner_;
  std::map<std::string, Entry> entries_;
};

// The thread's CPU time in seconds.
double ThreadCpuSeconds();

// Prints rank 0's per-step CPU time by op kind (`profile` timed `steps` steps of
// `step_cpu_ms` each), then the `top` costliest ops with their shapes and GFLOP/s.
void PrintProfile(const ProfilingBackend& profile, int steps, double step_cpu_ms, size_t top);

}  // namespace gantry
