// Element-wise activation: [N, ...] -> [N, ...] (any shape; output shape equals input).
#pragma once

#include <memory>

#include "worker/layers/layer.h"

namespace gantry {

class ActivationLayer : public Layer {
 public:
  // `slope` is LeakyReLU's negative slope and ignored by the other functions.
  explicit ActivationLayer(Activation f, float slope = 0.0f);

  std::string name() const override;
  Shape OutputShape(const Shape& input) const override { return input; }
  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

  Activation function() const { return f_; }
  float slope() const { return slope_; }

 private:
  // LeakyReLU and ReLU differentiate from their input, Tanh and Sigmoid from their output.
  bool DerivativeFromInput() const { return f_ == Activation::kLeakyRelu || f_ == Activation::kRelu; }

  Activation f_;
  float slope_;
};

std::unique_ptr<Layer> MakeLeakyRelu(float slope);
std::unique_ptr<Layer> MakeRelu();
std::unique_ptr<Layer> MakeTanh();
std::unique_ptr<Layer> MakeSigmoid();

}  // namespace gantry
