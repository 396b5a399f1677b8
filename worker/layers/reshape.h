// Reshape [N, ...] -> [N, per_sample_shape...]; Flatten [N, ...] -> [N, rest]. Both are views.
#pragma once

#include "worker/layers/layer.h"

namespace gantry {

// Keeps dimension 0 (the batch) and gives each sample `per_sample_shape`, which must
// hold as many elements as the input's sample. Forward and Backward return views that
// share storage with their argument.
class Reshape : public Layer {
 public:
  explicit Reshape(Shape per_sample_shape);

  std::string name() const override { return "reshape"; }
  Shape OutputShape(const Shape& input) const override;
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

 private:
  Shape per_sample_shape_;
};

// [N, d1, d2, ...] -> [N, d1 * d2 * ...], as a view.
class Flatten : public Layer {
 public:
  std::string name() const override { return "flatten"; }
  Shape OutputShape(const Shape& input) const override;
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;
};

}  // namespace gantry
