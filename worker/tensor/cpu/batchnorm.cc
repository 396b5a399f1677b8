#include <cmath>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/activation_math.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {
namespace {

// Sum of term(0..len) in double. Eight independent partial sums give the compiler vector
// lanes without reassociating one serial sum, which it may not do under strict IEEE.
template <typename Term>
inline double LaneSum(int64_t len, Term term) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= len; k += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += term(k + l);
  }
  double sum = 0.0;
  for (; k < len; ++k) sum += term(k);
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

// out[ch] = sum over (i, k) of term(flat index, ch) for x viewed as [n, c, hw], in double.
template <typename Term>
std::vector<double> ChannelReduce(int64_t n, int64_t c, int64_t hw, Term term) {
  std::vector<double> out(static_cast<size_t>(c), 0.0);
  if (hw == 1) {
    // [n, c]: a channel's elements are strided, so accumulate across contiguous channels.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t ch = 0; ch < c; ++ch) out[ch] += term(i * c + ch, ch);
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t base = (i * c + ch) * hw;
      out[ch] += LaneSum(hw, [&](int64_t k) { return term(base + k, ch); });
    }
  }
  return out;
}

// ChannelReduce of two terms in one pass over memory, each summed in the same order as
// ChannelReduce sums it alone (so the results are bit-identical to two calls).
template <typename TermA, typename TermB>
std::pair<std::vector<double>, std::vector<double>> ChannelReducePair(int64_t n, int64_t c, int64_t hw, TermA term_a,
                                                                      TermB term_b) {
  std::vector<double> out_a(static_cast<size_t>(c), 0.0), out_b(static_cast<size_t>(c), 0.0);
  if (hw == 1) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t ch = 0; ch < c; ++ch) {
        out_a[ch] += term_a(i * c + ch, ch);
        out_b[ch] += term_b(i * c + ch, ch);
      }
    }
    return {std::move(out_a), std::move(out_b)};
  }
  constexpr int kLanes = 8;  // as LaneSum
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t base = (i * c + ch) * hw;
      double lanes_a[kLanes] = {}, lanes_b[kLanes] = {};
      int64_t k = 0;
      for (; k + kLanes <= hw; k += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
          lanes_a[l] += term_a(base + k + l, ch);
          lanes_b[l] += term_b(base + k + l, ch);
        }
      }
      double sum_a = 0.0, sum_b = 0.0;
      for (; k < hw; ++k) {
        sum_a += term_a(base + k, ch);
        sum_b += term_b(base + k, ch);
      }
      for (int l = 0; l < kLanes; ++l) {
        sum_a += lanes_a[l];
        sum_b += lanes_b[l];
      }
      out_a[ch] += sum_a;
      out_b[ch] += sum_b;
    }
  }
  return {std::move(out_a), std::move(out_b)};
}

// y = (x - center[ch]) * scale[ch] + shift[ch]. Centring first keeps a large mean from
// cancelling catastrophically against x * scale.
void CenteredChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* center,
                           const float* scale, const float* shift, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    if (hw == 1) {
      const float* xi = x + i * c;
      float* yi = y + i * c;
      for (int64_t ch = 0; ch < c; ++ch) yi[ch] = (xi[ch] - center[ch]) * scale[ch] + shift[ch];
      continue;
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float m = center[ch], s = scale[ch], b = shift[ch];
      const float* xr = x + (i * c + ch) * hw;
      float* yr = y + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) yr[k] = (xr[k] - m) * s + b;
    }
  }
}

// dx = a[ch] * g(j) - b[ch] * (x - mean[ch]) + d[ch], g(j) the gradient reaching the
// normalisation's output at flat index j.
template <typename Grad>
void BatchNormInputGrad(int64_t n, int64_t c, int64_t hw, const float* x, Grad g, const float* mean,
                        const float* a, const float* b, const float* d, float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    if (hw == 1) {
      const int64_t o = i * c;
      for (int64_t ch = 0; ch < c; ++ch) {
        dx[o + ch] = a[ch] * g(o + ch) - b[ch] * (x[o + ch] - mean[ch]) + d[ch];
      }
      continue;
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float ac = a[ch], bc = b[ch], dc = d[ch], mc = mean[ch];
      const int64_t o = (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) dx[o + k] = ac * g(o + k) - bc * (x[o + k] - mc) + dc;
    }
  }
}

// BatchNormBackward with the output gradient given as g(flat index): dgamma, dbeta
// accumulate, dx (if not null) is overwritten.
template <typename Grad>
void NormBackward(int64_t n, int64_t c, int64_t hw, const float* x, Grad g, const float* mean, const float* var,
                  float eps, const float* gamma, float* dx, float* dgamma, float* dbeta) {
  const double count = static_cast<double>(n * hw);
  const auto [sum_dy, sum_dy_dev] = ChannelReducePair(
      n, c, hw, [&](int64_t j, int64_t) { return double{g(j)}; },
      [&](int64_t j, int64_t ch) { return double{g(j)} * (double{x[j]} - double{mean[ch]}); });
  std::vector<float> a(static_cast<size_t>(c)), b(static_cast<size_t>(c)), d(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    const double invstd = 1.0 / std::sqrt(double{var[ch]} + eps);
    const double sum_dy_xhat = sum_dy_dev[ch] * invstd;
    dgamma[ch] += static_cast<float>(sum_dy_xhat);
    dbeta[ch] += static_cast<float>(sum_dy[ch]);
    // dx = gamma*invstd * (dy - sum(dy)/M - xhat * sum(dy*xhat)/M), xhat = (x - mean)*invstd.
    const double gi = double{gamma[ch]} * invstd;
    a[ch] = static_cast<float>(gi);
    b[ch] = static_cast<float>(gi * invstd * sum_dy_xhat / count);
    d[ch] = static_cast<float>(-gi * sum_dy[ch] / count);
  }
  if (dx != nullptr) BatchNormInputGrad(n, c, hw, x, g, mean, a.data(), b.data(), d.data(), dx);
}

// y = act((x - center[ch]) * scale[ch] + shift[ch]) in one pass, for a branch-free `act`.
template <typename Act>
void NormThenSelect(int64_t n, int64_t c, int64_t hw, const float* x, const float* center, const float* scale,
                    const float* shift, float* y, Act act) {
  for (int64_t i = 0; i < n; ++i) {
    if (hw == 1) {
      const float* xi = x + i * c;
      float* yi = y + i * c;
      for (int64_t ch = 0; ch < c; ++ch) yi[ch] = act((xi[ch] - center[ch]) * scale[ch] + shift[ch]);
      continue;
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float m = center[ch], sc = scale[ch], b = shift[ch];
      const float* xr = x + (i * c + ch) * hw;
      float* yr = y + (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) yr[k] = act((xr[k] - m) * sc + b);
    }
  }
}

// Per-channel scale gamma / sqrt(var + eps), computed in double.
std::vector<float> NormScale(int64_t c, const float* var, float eps, const float* gamma) {
  std::vector<float> scale(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    scale[ch] = static_cast<float>(double{gamma[ch]} / std::sqrt(double{var[ch]} + eps));
  }
  return scale;
}

}  // namespace

namespace {

GANTRY_VECTOR_CLONES
void BatchNormStatsKernel(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  const double count = static_cast<double>(n * hw);
  CHECK_GT(count, 0.0);
  // Two passes, both in double: the variance never suffers E[x^2] - E[x]^2 cancellation.
  const std::vector<double> sum = ChannelReduce(n, c, hw, [&](int64_t j, int64_t) { return double{x[j]}; });
  std::vector<double> mu(sum.size());
  for (int64_t ch = 0; ch < c; ++ch) mu[ch] = sum[ch] / count;
  const std::vector<double> sq = ChannelReduce(n, c, hw, [&](int64_t j, int64_t ch) {
    const double dev = double{x[j]} - mu[ch];
    return dev * dev;
  });
  for (int64_t ch = 0; ch < c; ++ch) {
    mean[ch] = static_cast<float>(mu[ch]);
    var[ch] = static_cast<float>(sq[ch] / count);
  }
}

}  // namespace

void EigenCpuBackend::BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var) {
  BatchNormStatsKernel(n, c, hw, x, mean, var);
}

namespace {

GANTRY_VECTOR_CLONES
void BatchNormApplyKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean, const float* var,
                          float eps, const float* gamma, const float* beta, float* y) {
  // gamma / sqrt(var + eps) once per channel, in double; then one subtract and one
  // multiply-add per element.
  const std::vector<float> scale = NormScale(c, var, eps, gamma);
  CenteredChannelAffine(n, c, hw, x, mean, scale.data(), beta, y);
}

}  // namespace

void EigenCpuBackend::BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                     const float* var, float eps, const float* gamma, const float* beta, float* y) {
  BatchNormApplyKernel(n, c, hw, x, mean, var, eps, gamma, beta, y);
}

namespace {

GANTRY_VECTOR_CLONES
void BatchNormBackwardKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy, const float* mean,
                             const float* var, float eps, const float* gamma, float* dx, float* dgamma, float* dbeta) {
  NormBackward(n, c, hw, x, [dy](int64_t j) { return dy[j]; }, mean, var, eps, gamma, dx, dgamma, dbeta);
}

}  // namespace

void EigenCpuBackend::BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                        const float* mean, const float* var, float eps, const float* gamma, float* dx,
                                        float* dgamma, float* dbeta) {
  BatchNormBackwardKernel(n, c, hw, x, dy, mean, var, eps, gamma, dx, dgamma, dbeta);
}

namespace {

GANTRY_VECTOR_CLONES
void BatchNormActivationForwardKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                      const float* var, float eps, const float* gamma, const float* beta, Activation f,
                                      float slope, float* y) {
  CHECK(f != Activation::kLeakyRelu || slope >= 0.0f) << "fused LeakyReLU needs slope >= 0, got " << slope;
  const std::vector<float> scale = NormScale(c, var, eps, gamma);
  if (f == Activation::kLeakyRelu) {
    // The DCGAN's and PatchGAN's case: one branch-free pass that vectorises.
    NormThenSelect(n, c, hw, x, mean, scale.data(), beta, y, [slope](float v) { return v > 0.0f ? v : slope * v; });
    return;
  }
  if (f == Activation::kRelu) {
    // The U-Net's up blocks: likewise (ApplyActivation's ReLU, without its switch).
    NormThenSelect(n, c, hw, x, mean, scale.data(), beta, y, [](float v) { return v > 0.0f ? v : 0.0f; });
    return;
  }
  CenteredChannelAffine(n, c, hw, x, mean, scale.data(), beta, y);
  for (int64_t j = 0; j < n * c * hw; ++j) y[j] = ApplyActivation(f, slope, y[j]);
}

}  // namespace

void EigenCpuBackend::BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                                 const float* var, float eps, const float* gamma, const float* beta,
                                                 Activation f, float slope, float* y) {
  BatchNormActivationForwardKernel(n, c, hw, x, mean, var, eps, gamma, beta, f, slope, y);
}

namespace {

GANTRY_VECTOR_CLONES
void BatchNormActivationBackwardKernel(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                       const float* dy, const float* mean, const float* var, float eps,
                                       const float* gamma, Activation f, float slope, float* dx, float* dgamma,
                                       float* dbeta) {
  CHECK(f != Activation::kLeakyRelu || slope >= 0.0f) << "fused LeakyReLU needs slope >= 0, got " << slope;
  // The activation's gradient is recomputed where it is read instead of stored; for
  // LeakyReLU and ReLU as a branch-free select, so the passes vectorise. ReLU's is
  // ActivationSlopeAtOutput's (dy times 1 or 0, so -0 and NaN come out the same).
  if (f == Activation::kLeakyRelu) {
    auto g = [=](int64_t j) { return y[j] > 0.0f ? dy[j] : slope * dy[j]; };
    NormBackward(n, c, hw, x, g, mean, var, eps, gamma, dx, dgamma, dbeta);
    return;
  }
  if (f == Activation::kRelu) {
    auto g = [=](int64_t j) { return dy[j] * (y[j] > 0.0f ? 1.0f : 0.0f); };
    NormBackward(n, c, hw, x, g, mean, var, eps, gamma, dx, dgamma, dbeta);
    return;
  }
  auto g = [=](int64_t j) { return dy[j] * ActivationSlopeAtOutput(f, slope, y[j]); };
  NormBackward(n, c, hw, x, g, mean, var, eps, gamma, dx, dgamma, dbeta);
}

}  // namespace

void EigenCpuBackend::BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                                  const float* dy, const float* mean, const float* var, float eps,
                                                  const float* gamma, Activation f, float slope, float* dx,
                                                  float* dgamma, float* dbeta) {
  BatchNormActivationBackwardKernel(n, c, hw, x, y, dy, mean, var, eps, gamma, f, slope, dx, dgamma, dbeta);
}

}  // namespace gantry
