// Inverted dropout: [N, ...] -> [N, ...] (any shape; output shape equals input).
#pragma once

#include "worker/layers/layer.h"

namespace gantry {

// In training, zeroes each element with probability `rate` and scales the survivors by
// 1/(1-rate); the mask is a pure function of ctx.dropout_seed and the element index.
// In eval mode, or with rate 0, it is the identity (and returns views of its arguments).
class Dropout : public Layer {
 public:
  explicit Dropout(float rate);

  std::string name() const override { return "dropout"; }
  Shape OutputShape(const Shape& input) const override { return input; }
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

  float rate() const { return rate_; }

 private:
  float rate_;
};

}  // namespace gantry
