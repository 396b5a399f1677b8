// Scalar activation functions and their derivatives, shared by the element-wise and
// fused kernels of the reference backend.
#pragma once

#include <cmath>

#include <Eigen/Core>

#include "worker/tensor/backend.h"

namespace gantry {

// Overflow-free in both directions: exp only ever sees a non-positive argument.
inline float StableSigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

inline float ApplyActivation(Activation f, float slope, float x) {
  switch (f) {
    case Activation::kLeakyRelu: return x > 0.0f ? x : slope * x;
    case Activation::kRelu: return x > 0.0f ? x : 0.0f;
    // Eigen's rational approximation (a few ulp from std::tanh), not libm's: its vector
    // form runs the unfused kernel's loop ~100x faster than a libm call per element, and
    // the scalar form used here gives the same value for every float (checked over all
    // 2^32), so fused and unfused layers agree.
    case Activation::kTanh: return Eigen::numext::tanh(x);
    case Activation::kSigmoid: return StableSigmoid(x);
  }
  return x;
}

// f' at the input that gave output y (see Backend's fusions for why y suffices).
inline float ActivationSlopeAtOutput(Activation f, float slope, float y) {
  switch (f) {
    case Activation::kLeakyRelu: return y > 0.0f ? 1.0f : slope;
    case Activation::kRelu: return y > 0.0f ? 1.0f : 0.0f;
    case Activation::kTanh: return 1.0f - y * y;
    case Activation::kSigmoid: return y * (1.0f - y);
  }
  return 1.0f;
}

}  // namespace gantry
