#include "bench/profiling_backend.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace gantry {
namespace {

std::string ConvKey(const char* op, const ConvProblem& p) {
  std::ostringstream s;
  s << op << " " << p.batch << "x" << p.in_channels << "x" << p.in_height << "x" << p.in_width << " -> "
    << p.out_channels << "x" << p.out_height << "x" << p.out_width << " k" << p.kernel << "s" << p.stride;
  return s.str();
}

std::string ChannelsKey(const char* op, int64_t n, int64_t c, int64_t hw) {
  std::ostringstream s;
  s << op << " " << n << "x" << c << "x" << hw;
  return s.str();
}

std::string CountKey(const char* op, int64_t count) { return std::string(op) + " " + std::to_string(count); }

}  // namespace

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

template <typename Op>
auto ProfilingBackend::Timed(const std::string& key, Op op, double macs) {
  const double t0 = ThreadCpuSeconds();
  struct Charge {
    ProfilingBackend* self;
    const std::string& key;
    double t0;
    double macs;
    ~Charge() {
      Entry& e = self->entries_[key];
      e.key = key;
      ++e.calls;
      e.cpu_s += ThreadCpuSeconds() - t0;
      e.macs += macs;
    }
  } charge{this, key, t0, macs};
  return op();
}

std::vector<ProfilingBackend::Entry> ProfilingBackend::Entries() const {
  std::vector<Entry> out;
  for (const auto& [key, e] : entries_) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.cpu_s > b.cpu_s; });
  return out;
}

double ProfilingBackend::TotalSeconds() const {
  double total = 0;
  for (const auto& [key, e] : entries_) total += e.cpu_s;
  return total;
}

void ProfilingBackend::Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                            float* c, int64_t ldc) {
  Timed("gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
        [&] { inner_.Gemm(precision, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); },
        static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
}
void ProfilingBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  Timed(ConvKey("conv-fwd", p), [&] { inner_.ConvForward(p, x, w, y); }, p.macs());
}
void ProfilingBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  Timed(ConvKey("conv-bwd-data", p), [&] { inner_.ConvBackwardData(p, dy, w, dx); }, p.macs());
}
void ProfilingBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  Timed(ConvKey("conv-bwd-weights", p), [&] { inner_.ConvBackwardWeights(p, x, dy, dw); }, p.macs());
}
void ProfilingBackend::ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                                    float* dw) {
  Timed(ConvKey("conv-bwd-both", p), [&] { inner_.ConvBackward(p, x, dy, w, dx, dw); }, 2 * p.macs());
}
void ProfilingBackend::ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w,
                                             float* dx, float* dw) {
  Timed(ConvKey("convt-bwd-both", p), [&] { inner_.ConvTransposeBackward(p, g, x, w, dx, dw); }, 2 * p.macs());
}
void ProfilingBackend::AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) {
  Timed(ChannelsKey("bias", n, c, hw), [&] { inner_.AddChannelBias(n, c, hw, bias, y); });
}
void ProfilingBackend::ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  Timed(ChannelsKey("channel-sum", n, c, hw), [&] { inner_.ChannelSum(n, c, hw, dy, out); });
}
void ProfilingBackend::ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                                     const float* shift, float* y) {
  Timed(ChannelsKey("channel-affine", n, c, hw), [&] { inner_.ChannelAffine(n, c, hw, x, scale, shift, y); });
}
void ProfilingBackend::ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) {
  Timed(CountKey("act-fwd", count), [&] { inner_.ActivationForward(f, slope, count, x, y); });
}
void ProfilingBackend::ActivationBackward(Activation f, float slope, int64_t count, const float* x, const float* y,
                                          const float* dy, float* dx) {
  Timed(CountKey("act-bwd", count), [&] { inner_.ActivationBackward(f, slope, count, x, y, dy, dx); });
}
void ProfilingBackend::Multiply(int64_t count, const float* a, const float* b, float* out) {
  Timed(CountKey("multiply", count), [&] { inner_.Multiply(count, a, b, out); });
}
void ProfilingBackend::Axpy(int64_t count, float alpha, const float* x, float* y) {
  Timed(CountKey("axpy", count), [&] { inner_.Axpy(count, alpha, x, y); });
}
void ProfilingBackend::Scale(int64_t count, float alpha, float* x) {
  Timed(CountKey("scale", count), [&] { inner_.Scale(count, alpha, x); });
}
void ProfilingBackend::Copy(int64_t count, const float* src, float* dst) {
  Timed(CountKey("copy", count), [&] { inner_.Copy(count, src, dst); });
}
void ProfilingBackend::DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask,
                                      float* y) {
  Timed(CountKey("dropout-fwd", count), [&] { inner_.DropoutForward(count, rate, seed, x, mask, y); });
}
void ProfilingBackend::BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  Timed(ChannelsKey("bn-stats", n, c, hw), [&] { inner_.BatchNormStats(n, c, hw, x, mean, var); });
}
void ProfilingBackend::BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                      const float* var, float eps, const float* gamma, const float* beta, float* y) {
  Timed(ChannelsKey("bn-apply", n, c, hw), [&] { inner_.BatchNormApply(n, c, hw, x, mean, var, eps, gamma, beta, y); });
}
void ProfilingBackend::BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                         const float* mean, const float* var, float eps, const float* gamma,
                                         float* dx, float* dgamma, float* dbeta) {
  Timed(ChannelsKey("bn-bwd", n, c, hw),
        [&] { inner_.BatchNormBackward(n, c, hw, x, dy, mean, var, eps, gamma, dx, dgamma, dbeta); });
}
void ProfilingBackend::BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x,
                                                  const float* mean, const float* var, float eps, const float* gamma,
                                                  const float* beta, Activation f, float slope, float* y) {
  Timed(ChannelsKey("bn-act-fwd", n, c, hw),
        [&] { inner_.BatchNormActivationForward(n, c, hw, x, mean, var, eps, gamma, beta, f, slope, y); });
}
void ProfilingBackend::BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                                   const float* dy, const float* mean, const float* var, float eps,
                                                   const float* gamma, Activation f, float slope, float* dx,
                                                   float* dgamma, float* dbeta) {
  Timed(ChannelsKey("bn-act-bwd", n, c, hw), [&] {
    inner_.BatchNormActivationBackward(n, c, hw, x, y, dy, mean, var, eps, gamma, f, slope, dx, dgamma, dbeta);
  });
}
void ProfilingBackend::AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f,
                                                float slope, float* y) {
  Timed(ChannelsKey("bias-act", n, c, hw), [&] { inner_.AddChannelBiasActivation(n, c, hw, bias, f, slope, y); });
}
double ProfilingBackend::BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) {
  return Timed(CountKey("bce", count), [&] { return inner_.BceWithLogits(count, logits, target, dlogits); });
}
double ProfilingBackend::L1Loss(int64_t count, const float* pred, const float* target, float* dpred) {
  return Timed(CountKey("l1", count), [&] { return inner_.L1Loss(count, pred, target, dpred); });
}
void ProfilingBackend::AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                                const float* grad, float* param, float* m, float* v) {
  Timed(CountKey("adam", count), [&] { inner_.AdamStep(count, lr, beta1, beta2, eps, step, grad, param, m, v); });
}
void ProfilingBackend::SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
                               float* momentum_buf) {
  Timed(CountKey("sgd", count), [&] { inner_.SgdStep(count, lr, momentum, grad, param, momentum_buf); });
}
void ProfilingBackend::NarrowToBf16(int64_t count, const float* from, uint16_t* to) {
  Timed(CountKey("narrow-bf16", count), [&] { inner_.NarrowToBf16(count, from, to); });
}
void ProfilingBackend::WidenFromBf16(int64_t count, const uint16_t* from, float* to) {
  Timed(CountKey("widen-bf16", count), [&] { inner_.WidenFromBf16(count, from, to); });
}
void ProfilingBackend::ToWireBf16(int64_t count, const float* grads, uint16_t* wire) {
  Timed(CountKey("to-wire-bf16", count), [&] { inner_.ToWireBf16(count, grads, wire); });
}
bool ProfilingBackend::UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) {
  return Timed(CountKey("unscale", count), [&] { return inner_.UnscaleAndCheckFinite(count, inv_scale, grads); });
}
bool ProfilingBackend::UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale,
                                                     float* grads) {
  return Timed(CountKey("unscale-bf16", count),
               [&] { return inner_.UnscaleFromBf16AndCheckFinite(count, wire, inv_scale, grads); });
}

void PrintProfile(const ProfilingBackend& profile, int steps, double step_cpu_ms, size_t top) {
  const std::vector<ProfilingBackend::Entry> entries = profile.Entries();
  std::map<std::string, std::pair<double, int64_t>> kinds;
  for (const auto& e : entries) {
    auto& k = kinds[e.key.substr(0, e.key.find(' '))];
    k.first += e.cpu_s;
    k.second += e.calls;
  }
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> sorted(kinds.begin(), kinds.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double inside_ms = profile.TotalSeconds() * 1e3 / steps;
  std::printf("  profile (CPU ms per step, rank 0): %.1f in the backend, %.1f outside it\n", inside_ms,
              step_cpu_ms - inside_ms);
  for (const auto& [kind, v] : sorted) {
    std::printf("    %-22s %9.1f ms %5.1f%% %6ld calls\n", kind.c_str(), v.first * 1e3 / steps,
                100.0 * v.first * 1e3 / steps / step_cpu_ms, static_cast<long>(v.second / steps));
  }
  std::printf("  costliest ops:\n");
  for (size_t i = 0; i < std::min(top, entries.size()); ++i) {
    const ProfilingBackend::Entry& e = entries[i];
    std::printf("    %-52s %8.2f ms %4ld calls", e.key.c_str(), e.cpu_s * 1e3 / steps, static_cast<long>(e.calls / steps));
    if (e.macs > 0) std::printf(" %6.1f GFLOP/s", 2 * e.macs / e.cpu_s * 1e-9);
    std::printf("\n");
  }
}

}  // namespace gantry
