#include "worker/layers/instance_norm.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::RandomTensor;

TEST(InstanceNormTest, NoParametersNoBuffersShapeKept) {
  InstanceNorm in(3);
  EXPECT_EQ(in.name(), "instance_norm");
  EXPECT_TRUE(in.ParamSpecs().empty());
  EXPECT_TRUE(in.BufferSpecs().empty());
  EXPECT_EQ(in.OutputShape(Shape{2, 3, 4, 5}), (Shape{2, 3, 4, 5}));
}

// Every (sample, channel) plane comes out with mean 0 and variance var / (var + eps).
TEST(InstanceNormTest, NormalisesEachPlaneOnItsOwn) {
  InstanceNorm in(2, 1e-5f);
  Tensor x = RandomTensor(Shape{3, 2, 4, 6}, 5, 2.0f);
  for (int64_t p = 0; p < 6; ++p) {
    for (int64_t i = 0; i < 24; ++i) x.data()[p * 24 + i] = x.data()[p * 24 + i] * (1.0f + p) + 3.0f * p;
  }
  ActivationCache cache;
  const Tensor y = in.Forward(Context{}, x, &cache);
  for (int64_t p = 0; p < 6; ++p) {
    double m = 0, v = 0, xm = 0, xv = 0;
    for (int64_t i = 0; i < 24; ++i) {
      m += y.at(p * 24 + i) / 24.0;
      xm += x.at(p * 24 + i) / 24.0;
    }
    for (int64_t i = 0; i < 24; ++i) {
      v += std::pow(y.at(p * 24 + i) - m, 2) / 24.0;
      xv += std::pow(x.at(p * 24 + i) - xm, 2) / 24.0;
    }
    EXPECT_NEAR(m, 0.0, 1e-5) << "plane " << p;
    EXPECT_NEAR(v, xv / (xv + 1e-5), 1e-4) << "plane " << p;
  }
}

// A sample's output does not depend on the rest of its batch, in training or not.
TEST(InstanceNormTest, SamplesAreIndependentAndModesAgree) {
  InstanceNorm in(3);
  const Tensor x = RandomTensor(Shape{4, 3, 5, 5}, 9);
  ActivationCache c1, c2, c3;
  Context eval;
  eval.training = false;
  const Tensor all = in.Forward(Context{}, x, &c1);
  const Tensor one = in.Forward(Context{}, x.Slice(2, 3), &c2);
  const Tensor all_eval = in.Forward(eval, x, &c3);
  for (int64_t i = 0; i < 75; ++i) EXPECT_EQ(one.at(i), all.at(150 + i));
  for (int64_t i = 0; i < all.numel(); ++i) EXPECT_EQ(all_eval.at(i), all.at(i));
}

TEST(InstanceNormTest, GradientsMatchFiniteDifferences) {
  InstanceNorm in(3);
  CheckLayerGradients(in, nullptr, Shape{2, 3, 4, 5}, Context{});
}

TEST(InstanceNormTest, NoInputGradientWhenNotWanted) {
  InstanceNorm in(2);
  ActivationCache cache;
  const Tensor y = in.Forward(Context{}, RandomTensor(Shape{1, 2, 3, 3}, 2), &cache);
  EXPECT_FALSE(in.Backward(Context{}, y, cache, /*want_input_grad=*/false).defined());
}

}  // namespace
}  // namespace gantry
