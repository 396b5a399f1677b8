#include "worker/layers/dropout.h"

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::RandomTensor;

Context TrainingWithSeed(uint64_t seed) {
  Context ctx;
  ctx.training = true;
  ctx.dropout_seed = seed;
  return ctx;
}

TEST(DropoutLayerTest, GradientsMatchFiniteDifferencesUnderAFixedMask) {
  Dropout layer(0.4f);
  EXPECT_EQ(layer.name(), "dropout");
  CheckLayerGradients(layer, nullptr, Shape{4, 3, 4, 4}, TrainingWithSeed(1234));
}

TEST(DropoutLayerTest, TrainingDropsAndScalesAndBackwardUsesTheMask) {
  Dropout layer(0.5f);
  const Tensor x = RandomTensor(Shape{8, 64}, 1);
  const Tensor dy = RandomTensor(Shape{8, 64}, 2);
  ActivationCache cache;
  const Tensor y = layer.Forward(TrainingWithSeed(5), x, &cache);
  const Tensor dx = layer.Backward(TrainingWithSeed(5), dy, cache, true);
  int dropped = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (y.at(i) == 0.0f) {
      ++dropped;
      EXPECT_EQ(dx.at(i), 0.0f);
    } else {
      EXPECT_FLOAT_EQ(y.at(i), 2.0f * x.at(i));
      EXPECT_FLOAT_EQ(dx.at(i), 2.0f * dy.at(i));
    }
  }
  EXPECT_GT(dropped, 150);
  EXPECT_LT(dropped, 362);
}

TEST(DropoutLayerTest, SeedsChangeTheMask) {
  Dropout layer(0.5f);
  const Tensor x = RandomTensor(Shape{4, 64}, 3);
  ActivationCache c1, c2, c3;
  const Tensor y1 = layer.Forward(TrainingWithSeed(1), x, &c1);
  const Tensor y2 = layer.Forward(TrainingWithSeed(1), x, &c2);
  const Tensor y3 = layer.Forward(TrainingWithSeed(2), x, &c3);
  int differing = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(y1.at(i), y2.at(i));
    differing += y1.at(i) != y3.at(i);
  }
  EXPECT_GT(differing, 32);
}

TEST(DropoutLayerTest, EvalAndRateZeroAreTheIdentity) {
  const Tensor x = RandomTensor(Shape{2, 16}, 4);
  const Tensor dy = RandomTensor(Shape{2, 16}, 5);
  Context eval;
  eval.training = false;
  Dropout half(0.5f), none(0.0f);
  for (auto [layer, ctx] : {std::pair{&half, eval}, std::pair{&none, TrainingWithSeed(6)}}) {
    ActivationCache cache;
    const Tensor y = layer->Forward(ctx, x, &cache);
    const Tensor dx = layer->Backward(ctx, dy, cache, true);
    for (int64_t i = 0; i < x.numel(); ++i) {
      EXPECT_EQ(y.at(i), x.at(i));
      EXPECT_EQ(dx.at(i), dy.at(i));
    }
  }
}

}  // namespace
}  // namespace gantry
