#include "worker/layers/losses.h"

#include <algorithm>
#include <cmath>

namespace gantry {

LossResult BceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target) {
  CHECK_GT(logits.numel(), 0) << "loss of an empty tensor";
  LossResult r{0.0, ctx.Uninitialized(logits.shape())};
  r.loss = ctx.backend->BceWithLogits(logits.numel(), logits.data(), target, r.grad.data());
  return r;
}

LossResult WeightedBceWithLogitsLoss(const Context& ctx, const Tensor& logits, float target, float weight) {
  LossResult r = BceWithLogitsLoss(ctx, logits, target);
  if (weight != 1.0f) ctx.backend->Scale(r.grad.numel(), weight, r.grad.data());
  return r;
}

LossResult SoftmaxCrossEntropyLoss(const Tensor& logits, const std::vector<int32_t>& labels) {
  CHECK_EQ(logits.shape().rank(), 2) << "softmax cross-entropy of " << logits.shape().ToString();
  const int64_t n = logits.dim(0), k = logits.dim(1);
  CHECK_EQ(static_cast<int64_t>(labels.size()), n) << "one label per row";
  CHECK_GT(n, 0) << "loss of an empty tensor";
  LossResult r{0.0, Tensor::Zeros(logits.shape())};
  const float* x = logits.data();
  float* g = r.grad.data();
  for (int64_t i = 0; i < n; ++i) {
    CHECK(labels[i] >= 0 && labels[i] < k) << "label " << labels[i] << " of row " << i << " of " << k << " classes";
    // Shifted by the row's maximum so exp never overflows.
    const float* row = x + i * k;
    double top = row[0];
    for (int64_t j = 1; j < k; ++j) top = std::max(top, static_cast<double>(row[j]));
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += std::exp(row[j] - top);
    const double log_sum = std::log(sum) + top;
    r.loss += log_sum - row[labels[i]];
    for (int64_t j = 0; j < k; ++j) {
      const double p = std::exp(row[j] - log_sum);
      g[i * k + j] = static_cast<float>((p - (j == labels[i] ? 1.0 : 0.0)) / static_cast<double>(n));
    }
  }
  r.loss /= static_cast<double>(n);
  return r;
}

LossResult L1Loss(const Context& ctx, const Tensor& pred, const Tensor& target) {
  CHECK(pred.shape() == target.shape()) << "l1 of " << pred.shape().ToString() << " and "
                                        << target.shape().ToString();
  CHECK_GT(pred.numel(), 0) << "loss of an empty tensor";
  LossResult r{0.0, ctx.Zeros(pred.shape())};
  r.loss = ctx.backend->L1Loss(pred.numel(), pred.data(), target.data(), r.grad.data());
  return r;
}

}  // namespace gantry
