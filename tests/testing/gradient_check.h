// Finite-difference gradient checking for layers and losses.
//
// The check differentiates the scalar L = sum_i w_i * y_i for fixed random weights w,
// so every output element contributes. Analytic gradients come from the layer's
// Backward with dL/dy = w; numeric ones from central differences
// (L(x + h) - L(x - h)) / 2h evaluated in double from fp32 forwards.
#pragma once

#include <functional>
#include <string>

#include "worker/layers/layer.h"
#include "worker/optim/flat_parameters.h"

namespace gantry::testing {

struct GradCheckOptions {
  double step = 1e-2;         // h, in units of the input's own scale
  double tolerance = 2e-2;    // on |a - n| / max(|a|, |n|, floor)
  double floor = 1e-2;        // keeps tiny gradients from failing on round-off
  int max_checks = 64;        // elements probed per tensor (spread evenly)
  uint64_t seed = 7;
};

// A random tensor with values uniform in [-scale, scale].
Tensor RandomTensor(const Shape& shape, uint64_t seed, float scale = 1.0f);

// Runs Forward/Backward of `layer` (parameters bound and initialised by the caller
// through `params`, which may be null for parameter-free layers) on a random input of
// `input_shape`, and adds a gtest failure for every probed input or parameter element
// whose analytic and numeric gradients disagree. The same ctx is used for every
// forward (so dropout masks repeat).
void CheckLayerGradients(Layer& layer, FlatParameters* params, const Shape& input_shape,
                         const Context& ctx, const GradCheckOptions& options = {});

// Compares an analytic gradient with central differences of a scalar function
// f(x) perturbed in place; `what` names the tensor in failure messages.
void CheckGradientOf(const std::function<double()>& f, const Tensor& x, const Tensor& analytic,
                     const std::string& what, const GradCheckOptions& options);

}  // namespace gantry::testing
