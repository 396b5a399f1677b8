#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
double BceWithLogitsKernel(int64_t count, const float* logits, float target, float* dlogits) {
  CHECK_GT(count, 0);
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const float x = logits[i];
    // log1p(exp(-|x|)) never overflows, and max(x,0) - x*t is exact for saturated logits.
    sum += static_cast<double>(std::max(x, 0.0f) - x * target) + std::log1p(std::exp(-std::fabs(double{x})));
  }
  if (dlogits != nullptr) {
    const float inv_count = 1.0f / static_cast<float>(count);
    for (int64_t i = 0; i < count; ++i) {
      const float x = logits[i];
      const float e = std::exp(-std::fabs(x));  // sigmoid from exp of a non-positive number only
      const float sigmoid = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
      dlogits[i] = (sigmoid - target) * inv_count;
    }
  }
  return sum / static_cast<double>(count);
}

}  // namespace

double EigenCpuBackend::BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) {
  return BceWithLogitsKernel(count, logits, target, dlogits);
}

double EigenCpuBackend::L1Loss(int64_t count, const float* pred, const float* target, float* dpred) {
  CHECK_GT(count, 0);
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += std::fabs(static_cast<double>(pred[i]) - target[i]);
  if (dpred != nullptr) {
    const float inv_count = 1.0f / static_cast<float>(count);
    for (int64_t i = 0; i < count; ++i) {
      const float d = pred[i] - target[i];
      dpred[i] = d > 0.0f ? inv_count : (d < 0.0f ? -inv_count : 0.0f);
    }
  }
  return sum / static_cast<double>(count);
}

}  // namespace gantry
