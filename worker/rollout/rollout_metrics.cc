#include "worker/rollout/rollout_metrics.h"

#include <cmath>
#include <limits>

namespace gantry {
namespace {

double Ratio(double error_sq, double truth_sq) {
  if (truth_sq > 0) return std::sqrt(error_sq / truth_sq);
  return error_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

double RelativeL2(const float* pred, const float* truth, int64_t n) {
  double err = 0, ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(pred[i]) - truth[i];
    err += d * d;
    ref += static_cast<double>(truth[i]) * truth[i];
  }
  return Ratio(err, ref);
}

double RelativeL2Masked(const float* pred, const float* truth, int64_t planes, int64_t plane,
                        const std::vector<uint8_t>& mask, uint8_t select) {
  double err = 0, ref = 0;
  for (int64_t c = 0; c < planes; ++c) {
    for (int64_t i = 0; i < plane; ++i) {
      if (mask[i] != select) continue;
      const int64_t k = c * plane + i;
      const double d = static_cast<double>(pred[k]) - truth[k];
      err += d * d;
      ref += static_cast<double>(truth[k]) * truth[k];
    }
  }
  return Ratio(err, ref);
}

double UncentredCorrelation(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa == 0 || bb == 0) return 0.0;
  return ab / std::sqrt(aa * bb);
}

std::optional<int64_t> FirstBelow(const std::vector<double>& correlation, double threshold) {
  for (size_t i = 0; i < correlation.size(); ++i) {
    if (!(correlation[i] >= threshold)) return static_cast<int64_t>(i);  // NaN counts as below
  }
  return std::nullopt;
}

bool BlewUp(const float* pred, const float* truth, int64_t n) {
  double pp = 0, tt = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(pred[i])) return true;
    pp += static_cast<double>(pred[i]) * pred[i];
    tt += static_cast<double>(truth[i]) * truth[i];
  }
  return std::sqrt(pp) > kBlowUpNormRatio * std::sqrt(tt);
}

}  // namespace gantry
