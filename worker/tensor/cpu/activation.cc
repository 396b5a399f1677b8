#include <cmath>

#include <Eigen/Core>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/activation_math.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {

namespace {

GANTRY_VECTOR_CLONES
void ActivationForwardKernel(Activation f, float slope, int64_t count, const float* x, float* y) {
  // One loop per function keeps the branch out of the loop body, so each vectorises.
  switch (f) {
    case Activation::kLeakyRelu:
      for (int64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
      return;
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case Activation::kTanh:
      // Eigen's vector form of ApplyActivation's tanh (the same values, see there).
      Eigen::Map<Eigen::ArrayXf>(y, count) = Eigen::Map<const Eigen::ArrayXf>(x, count).tanh();
      return;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) y[i] = StableSigmoid(x[i]);
      return;
  }
}

}  // namespace

void EigenCpuBackend::ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) {
  ActivationForwardKernel(f, slope, count, x, y);
}

namespace {

GANTRY_VECTOR_CLONES
void ActivationBackwardKernel(Activation f, float slope, int64_t count, const float* x, const float* y, const float* dy,
                              float* dx) {
  switch (f) {
    case Activation::kLeakyRelu:
      CHECK(x != nullptr) << "LeakyReLU backward needs x";
      for (int64_t i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i];
      return;
    case Activation::kRelu:
      CHECK(x != nullptr) << "ReLU backward needs x";
      for (int64_t i = 0; i < count; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
      return;
    case Activation::kTanh:
      CHECK(y != nullptr) << "Tanh backward needs y";
      for (int64_t i = 0; i < count; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
      return;
    case Activation::kSigmoid:
      CHECK(y != nullptr) << "Sigmoid backward needs y";
      for (int64_t i = 0; i < count; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
      return;
  }
}

}  // namespace

void EigenCpuBackend::ActivationBackward(Activation f, float slope, int64_t count, const float* x, const float* y,
                                         const float* dy, float* dx) {
  ActivationBackwardKernel(f, slope, count, x, y, dy, dx);
}

}  // namespace gantry
