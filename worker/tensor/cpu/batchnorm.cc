#include <cmath>
#include <vector>

#include "common/check.h"
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

// dx = a[ch] * dy - b[ch] * (x - mean[ch]) + d[ch].
void BatchNormInputGrad(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy, const float* mean,
                        const float* a, const float* b, const float* d, float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    if (hw == 1) {
      const int64_t o = i * c;
      for (int64_t ch = 0; ch < c; ++ch) {
        dx[o + ch] = a[ch] * dy[o + ch] - b[ch] * (x[o + ch] - mean[ch]) + d[ch];
      }
      continue;
    }
    for (int64_t ch = 0; ch < c; ++ch) {
      const float ac = a[ch], bc = b[ch], dc = d[ch], mc = mean[ch];
      const int64_t o = (i * c + ch) * hw;
      for (int64_t k = 0; k < hw; ++k) dx[o + k] = ac * dy[o + k] - bc * (x[o + k] - mc) + dc;
    }
  }
}

}  // namespace

void EigenCpuBackend::BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean,
                                     float* var) {
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

void EigenCpuBackend::BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                     const float* var, float eps, const float* gamma, const float* beta,
                                     float* y) {
  // gamma / sqrt(var + eps) once per channel, in double; then one subtract and one
  // multiply-add per element.
  std::vector<float> scale(static_cast<size_t>(c));
  for (int64_t ch = 0; ch < c; ++ch) {
    scale[ch] = static_cast<float>(double{gamma[ch]} / std::sqrt(double{var[ch]} + eps));
  }
  CenteredChannelAffine(n, c, hw, x, mean, scale.data(), beta, y);
}

void EigenCpuBackend::BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                        const float* mean, const float* var, float eps, const float* gamma,
                                        float* dx, float* dgamma, float* dbeta) {
  const double count = static_cast<double>(n * hw);
  const std::vector<double> sum_dy =
      ChannelReduce(n, c, hw, [&](int64_t j, int64_t) { return double{dy[j]}; });
  const std::vector<double> sum_dy_dev = ChannelReduce(
      n, c, hw, [&](int64_t j, int64_t ch) { return double{dy[j]} * (double{x[j]} - double{mean[ch]}); });
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
  if (dx != nullptr) BatchNormInputGrad(n, c, hw, x, dy, mean, a.data(), b.data(), d.data(), dx);
}

}  // namespace gantry
