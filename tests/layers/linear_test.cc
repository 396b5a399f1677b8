#include "worker/layers/linear.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "tests/testing/layer_contract.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::RandomTensor;

Tensor LinearParamView(const FlatParameters& p, size_t i) {
  const FlatParameters::Entry& e = p.param_entries()[i];
  return p.params().ViewAt(e.offset, e.spec.shape);
}

TEST(LinearTest, ShapesAndParamSpecs) {
  Linear layer(6, 4, /*bias=*/true);
  EXPECT_EQ(layer.name(), "linear");
  EXPECT_EQ(layer.OutputShape(Shape{3, 6}), (Shape{3, 4}));
  const std::vector<ParamSpec> specs = layer.ParamSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "weight");
  EXPECT_EQ(specs[0].shape, (Shape{4, 6}));
  EXPECT_EQ(specs[0].init, Init::kGlorotUniform);
  EXPECT_EQ(specs[0].fan_in, 6);
  EXPECT_EQ(specs[0].fan_out, 4);
  EXPECT_EQ(specs[1].name, "bias");
  EXPECT_EQ(specs[1].shape, (Shape{4}));
  EXPECT_EQ(specs[1].init, Init::kZeros);
  EXPECT_EQ(Linear(6, 4, /*bias=*/false).ParamSpecs().size(), 1u);
}

TEST(LinearTest, ForwardMatchesNaive) {
  for (bool bias : {false, true}) {
    Linear layer(5, 3, bias);
    Layer* layers[] = {&layer};
    FlatParameters params(layers);
    params.params().CopyFrom(RandomTensor(params.params().shape(), 3));
    const Tensor w = LinearParamView(params, 0);
    const Tensor x = RandomTensor(Shape{4, 5}, 4);
    ActivationCache cache;
    const Tensor y = layer.Forward(Context{}, x, &cache);
    ASSERT_EQ(y.shape(), (Shape{4, 3}));
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t o = 0; o < 3; ++o) {
        double expected = bias ? LinearParamView(params, 1).at(o) : 0.0;
        for (int64_t j = 0; j < 5; ++j) expected += static_cast<double>(x.at(i * 5 + j)) * w.at(o * 5 + j);
        EXPECT_NEAR(y.at(i * 3 + o), expected, 1e-5) << "bias=" << bias << " y[" << i << "," << o << "]";
      }
    }
  }
}

TEST(LinearTest, GradientsMatchFiniteDifferences) {
  for (bool bias : {false, true}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    Linear layer(7, 5, bias);
    Layer* layers[] = {&layer};
    FlatParameters params(layers);
    Rng rng(5);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    CheckLayerGradients(layer, &params, Shape{3, 7}, Context{});
  }
}

TEST(LinearTest, NoParamGradsLeavesGradsUntouched) {
  Linear layer(4, 3, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsFlagHonoured(layer, params, Shape{2, 4});
}

TEST(LinearTest, ParamGradsAccumulate) {
  Linear layer(4, 3, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsAccumulate(layer, params, Shape{2, 4});
}

}  // namespace
}  // namespace gantry
