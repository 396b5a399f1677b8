// Scalar losses over whole tensors (any shape): the mean loss and its gradient.
#pragma once

#include <cstdint>
#include <vector>

#include "worker/layers/layer.h"

namespace gantry {

struct LossResult {
  double loss = 0.0;
  Tensor grad;  // d(loss)/d(input), shaped like the input
};

// Mean binary cross-entropy of sigmoid(logits) against the constant label `target`
// (computed on logits, stable for any magnitude).
LossResult BceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target);
// The same, with the gradient multiplied by `weight` (the loss is left unweighted); a
// weight of 1 multiplies nothing.
LossResult WeightedBceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target, float weight);

// Mean over the N rows of logits [N, K] of the cross-entropy of softmax(row) against
// the class labels[n] (each < K); the gradient is (softmax - one_hot) / N. Computed on
// the host (CPU tensors only): it trains the small quality judge, not the GANs.
LossResult SoftmaxCrossEntropyLoss(const Tensor& logits, const std::vector<int32_t>& labels);

// Mean absolute error; the gradient is sign(pred - target) / numel (0 where equal).
LossResult L1Loss(const Context& ctx, const Tensor& pred, const Tensor& target);

}  // namespace gantry
