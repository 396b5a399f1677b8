#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/random.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void DropoutForwardKernel(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y) {
  CHECK(rate >= 0.0f && rate < 1.0f) << "dropout rate " << rate;
  // Inverted dropout: kept units are scaled up so the expected output equals x.
  const float keep_scale = 1.0f / (1.0f - rate);
  for (int64_t i = 0; i < count; ++i) {
    const float m = HashUniform(seed, static_cast<uint64_t>(i)) < rate ? 0.0f : keep_scale;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace

void EigenCpuBackend::DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y) {
  DropoutForwardKernel(count, rate, seed, x, mask, y);
}

}  // namespace gantry
