#include "worker/layers/activation.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;

std::vector<std::unique_ptr<Layer>> AllActivations() {
  std::vector<std::unique_ptr<Layer>> layers;
  layers.push_back(MakeLeakyRelu(0.2f));
  layers.push_back(MakeRelu());
  layers.push_back(MakeTanh());
  layers.push_back(MakeSigmoid());
  return layers;
}

TEST(ActivationLayerTest, NamesAndShapes) {
  EXPECT_EQ(MakeLeakyRelu(0.2f)->name(), "leaky_relu");
  EXPECT_EQ(MakeRelu()->name(), "relu");
  EXPECT_EQ(MakeTanh()->name(), "tanh");
  EXPECT_EQ(MakeSigmoid()->name(), "sigmoid");
  EXPECT_EQ(MakeTanh()->OutputShape(Shape{2, 3, 4, 5}), (Shape{2, 3, 4, 5}));
}

TEST(ActivationLayerTest, LeakyReluForward) {
  ActivationLayer layer(Activation::kLeakyRelu, 0.2f);
  ActivationCache cache;
  const Tensor y = layer.Forward(Context{}, Tensor::FromVector(Shape{1, 3}, {-1.0f, 0.0f, 2.0f}), &cache);
  EXPECT_FLOAT_EQ(y.at(0), -0.2f);
  EXPECT_FLOAT_EQ(y.at(1), 0.0f);
  EXPECT_FLOAT_EQ(y.at(2), 2.0f);
}

TEST(ActivationLayerTest, GradientsMatchFiniteDifferences) {
  // A small step keeps probes of LeakyReLU/ReLU from straddling the kink at 0.
  GradCheckOptions options;
  options.step = 1e-3;
  const Shape shape{4, 3, 5, 5};
  for (const auto& layer : AllActivations()) {
    SCOPED_TRACE(layer->name());
    CheckLayerGradients(*layer, nullptr, shape, Context{}, options);
  }
}

TEST(ActivationLayerTest, EachBackwardUsesItsOwnForwardsCache) {
  for (const auto& layer : AllActivations()) {
    SCOPED_TRACE(layer->name());
    const Tensor x1 = RandomTensor(Shape{2, 8}, 1), x2 = RandomTensor(Shape{2, 8}, 2);
    const Tensor dy = RandomTensor(Shape{2, 8}, 3);
    ActivationCache c1, c2;
    layer->Forward(Context{}, x1, &c1);
    const Tensor expected = layer->Backward(Context{}, dy, c1, true).Clone();
    layer->Forward(Context{}, x2, &c2);  // a second forward must not disturb c1
    const Tensor dx = layer->Backward(Context{}, dy, c1, true);
    for (int64_t i = 0; i < dx.numel(); ++i) EXPECT_EQ(dx.at(i), expected.at(i)) << i;
  }
}

TEST(ActivationLayerTest, NoInputGradRequested) {
  auto layer = MakeTanh();
  ActivationCache cache;
  const Tensor x = RandomTensor(Shape{2, 4}, 4);
  layer->Forward(Context{}, x, &cache);
  EXPECT_FALSE(layer->Backward(Context{}, x, cache, /*want_input_grad=*/false).defined());
}

}  // namespace
}  // namespace gantry
