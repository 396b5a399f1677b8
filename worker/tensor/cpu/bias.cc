#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/activation_math.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void AddChannelBiasKernel(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float b = bias[ch];
      float* row = y + (i * c + ch) * hw;
      for (int64_t j = 0; j < hw; ++j) row[j] += b;
    }
  }
}

}  // namespace

void EigenCpuBackend::AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) {
  AddChannelBiasKernel(n, c, hw, bias, y);
}

namespace {

GANTRY_VECTOR_CLONES
void AddChannelBiasActivationKernel(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f, float slope,
                                    float* y) {
  CHECK(f != Activation::kLeakyRelu || slope >= 0.0f) << "fused LeakyReLU needs slope >= 0, got " << slope;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float b = bias[ch];
      float* row = y + (i * c + ch) * hw;
      if (f == Activation::kLeakyRelu) {  // the DCGAN's case, kept branch-free so it vectorises
        for (int64_t j = 0; j < hw; ++j) {
          const float v = row[j] + b;
          row[j] = v > 0.0f ? v : slope * v;
        }
        continue;
      }
      for (int64_t j = 0; j < hw; ++j) row[j] = ApplyActivation(f, slope, row[j] + b);
    }
  }
}

}  // namespace

void EigenCpuBackend::AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f,
                                               float slope, float* y) {
  AddChannelBiasActivationKernel(n, c, hw, bias, f, slope, y);
}

namespace {

GANTRY_VECTOR_CLONES
void ChannelSumKernel(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  for (int64_t ch = 0; ch < c; ++ch) {
    // Summed in double: a channel of a large batch adds up n * hw terms.
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float* row = dy + (i * c + ch) * hw;
      for (int64_t j = 0; j < hw; ++j) sum += row[j];
    }
    out[ch] += static_cast<float>(sum);
  }
}

}  // namespace

void EigenCpuBackend::ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) {
  ChannelSumKernel(n, c, hw, dy, out);
}

}  // namespace gantry
