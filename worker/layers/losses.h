// Scalar losses over whole tensors (any shape): the mean loss and its gradient.
#pragma once

#include "worker/layers/layer.h"

namespace gantry {

struct LossResult {
  double loss = 0.0;
  Tensor grad;  // d(loss)/d(input), shaped like the input
};

// Mean binary cross-entropy of sigmoid(logits) against the constant label `target`
// (computed on logits, stable for any magnitude).
LossResult BceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target);

// Mean absolute error; the gradient is sign(pred - target) / numel (0 where equal).
LossResult L1Loss(const Context& ctx, const Tensor& pred, const Tensor& target);

}  // namespace gantry
