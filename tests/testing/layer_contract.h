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

// For a convolution layer, which the reference backend lowers a chunk of samples at a
// time: a batch (of 5, say) split into chunks of 1, 2, 3 and 4 samples gives what one
// chunk gives (each chunk's samples land in their own output rows and every chunk adds to
// the weight gradient), and a cap below one sample's columns still makes progress.
// `column_floats_per_sample` is the size of one sample's column matrix. Sets `params`.
void CheckChunkedBatchMatchesOneChunk(Layer& layer, FlatParameters& params, const Shape& input_shape,
                                      int64_t column_floats_per_sample);

}  // namespace gantry::testing
