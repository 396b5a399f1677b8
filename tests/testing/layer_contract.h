// Checks of the Layer contract (worker/layers/layer.h) that every parameterised layer
// must meet, shared by the layers' tests.
#pragma once

#include "worker/layers/layer.h"
#include "worker/optim/flat_parameters.h"

namespace gantry::testing {

// With ctx.param_grads = false, Backward leaves every gradient untouched and returns
// the same dx as with parameter gradients on; without want_input_grad it returns an
// undefined tensor. `params` must be bound to `layer` and initialised.
void CheckParamGradsFlagHonoured(Layer& layer, FlatParameters& params, const Shape& input_shape);

// Two Backward calls on one cache add up: the gradients double (and are not all zero).
void CheckParamGradsAccumulate(Layer& layer, FlatParameters& params, const Shape& input_shape);

}  // namespace gantry::testing
