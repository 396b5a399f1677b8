// The activations of worker/tensor/backend.h in double, for the op suite's references.
#pragma once

#include <cmath>
#include <string>

#include "worker/tensor/backend.h"

namespace gantry::testing {

inline constexpr Activation kActivations[] = {Activation::kLeakyRelu, Activation::kRelu, Activation::kTanh,
                                              Activation::kSigmoid};
// LeakyReLU's negative slope in the suite (the DCGAN's).
inline constexpr float kSlope = 0.2f;

inline std::string ActivationName(Activation f) {
  switch (f) {
    case Activation::kLeakyRelu:
      return "leaky-relu";
    case Activation::kRelu:
      return "relu";
    case Activation::kTanh:
      return "tanh";
    case Activation::kSigmoid:
      return "sigmoid";
  }
  return "?";
}

// LeakyReLU and ReLU are exact in fp32 (a select and at most one product).
inline bool PiecewiseLinear(Activation f) { return f == Activation::kLeakyRelu || f == Activation::kRelu; }

inline double Activate(Activation f, double slope, double x) {
  switch (f) {
    case Activation::kLeakyRelu:
      return x > 0.0 ? x : slope * x;
    case Activation::kRelu:
      return x > 0.0 ? x : 0.0;
    case Activation::kTanh:
      return std::tanh(x);
    case Activation::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
  }
  return x;
}

// f' at the input that gave output y: LeakyReLU and ReLU keep the input's sign, Tanh and
// Sigmoid have f' as a function of y.
inline double SlopeAtOutput(Activation f, double slope, double y) {
  switch (f) {
    case Activation::kLeakyRelu:
      return y > 0.0 ? 1.0 : slope;
    case Activation::kRelu:
      return y > 0.0 ? 1.0 : 0.0;
    case Activation::kTanh:
      return 1.0 - y * y;
    case Activation::kSigmoid:
      return y * (1.0 - y);
  }
  return 1.0;
}

}  // namespace gantry::testing
