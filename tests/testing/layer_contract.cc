#include "tests/testing/layer_contract.h"

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {

void CheckParamGradsFlagHonoured(Layer& layer, FlatParameters& params, const Shape& input_shape) {
  params.grads().Fill(0.25f);
  const Tensor x = RandomTensor(input_shape, 5);
  const Tensor dy = RandomTensor(layer.OutputShape(input_shape), 6);
  ActivationCache cache;
  layer.Forward(Context{}, x, &cache);
  Context frozen;
  frozen.param_grads = false;
  const Tensor dx_frozen = layer.Backward(frozen, dy, cache, /*want_input_grad=*/true);
  for (int64_t i = 0; i < params.grads().numel(); ++i) ASSERT_EQ(params.grads().at(i), 0.25f) << layer.name() << " " << i;
  const Tensor dx = layer.Backward(Context{}, dy, cache, /*want_input_grad=*/true);
  ASSERT_EQ(dx_frozen.shape(), input_shape);
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_EQ(dx_frozen.at(i), dx.at(i)) << layer.name() << " " << i;
  EXPECT_FALSE(layer.Backward(frozen, dy, cache, /*want_input_grad=*/false).defined());
}

void CheckParamGradsAccumulate(Layer& layer, FlatParameters& params, const Shape& input_shape) {
  const Tensor x = RandomTensor(input_shape, 8);
  const Tensor dy = RandomTensor(layer.OutputShape(input_shape), 9);
  ActivationCache cache;
  layer.Forward(Context{}, x, &cache);
  params.ZeroGrads();
  EXPECT_FALSE(layer.Backward(Context{}, dy, cache, /*want_input_grad=*/false).defined());
  const Tensor once = params.grads().Clone();
  layer.Backward(Context{}, dy, cache, /*want_input_grad=*/true);
  bool any_nonzero = false;
  for (int64_t i = 0; i < once.numel(); ++i) {
    any_nonzero |= once.at(i) != 0.0f;
    EXPECT_FLOAT_EQ(params.grads().at(i), 2.0f * once.at(i)) << layer.name() << " " << i;
  }
  EXPECT_TRUE(any_nonzero) << layer.name();
}

}  // namespace gantry::testing
