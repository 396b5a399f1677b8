#include "worker/layers/losses.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckGradientOf;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;

// Loss gradients carry a 1/numel factor, so judge them against a floor below that scale.
GradCheckOptions LossOptions() {
  GradCheckOptions o;
  o.floor = 1e-4;
  return o;
}

TEST(LossesTest, BceKnownValues) {
  const Tensor zeros = Tensor::Zeros(Shape{4, 1});
  EXPECT_NEAR(BceWithLogitsLoss(Context{}, zeros, 1.0f).loss, std::log(2.0), 1e-7);
  EXPECT_NEAR(BceWithLogitsLoss(Context{}, zeros, 0.0f).loss, std::log(2.0), 1e-7);
  const LossResult r = BceWithLogitsLoss(Context{}, Tensor::FromVector(Shape{2}, {100.0f, -100.0f}), 1.0f);
  EXPECT_NEAR(r.loss, 50.0, 1e-6);
  EXPECT_EQ(r.grad.shape(), (Shape{2}));
  EXPECT_FLOAT_EQ(r.grad.at(1), -0.5f);
}

TEST(LossesTest, BceGradientMatchesFiniteDifferences) {
  for (float target : {0.0f, 0.9f, 1.0f}) {
    const Tensor logits = RandomTensor(Shape{6, 1}, 1, 3.0f);
    const LossResult r = BceWithLogitsLoss(Context{}, logits, target);
    CheckGradientOf([&] { return BceWithLogitsLoss(Context{}, logits, target).loss; }, logits, r.grad,
                    "bce logits", LossOptions());
  }
}

TEST(LossesTest, SoftmaxCrossEntropyKnownValues) {
  // Equal logits: log K; a confident right answer: about 0.
  EXPECT_NEAR(SoftmaxCrossEntropyLoss(Tensor::Zeros(Shape{3, 10}), {0, 5, 9}).loss, std::log(10.0), 1e-6);
  const LossResult r = SoftmaxCrossEntropyLoss(Tensor::FromVector(Shape{1, 3}, {50.0f, 0.0f, 1000.0f}), {2});
  EXPECT_NEAR(r.loss, 0.0, 1e-6);  // stable at large logits
  EXPECT_NEAR(SoftmaxCrossEntropyLoss(Tensor::FromVector(Shape{1, 2}, {0.0f, 1000.0f}), {0}).loss, 1000.0, 1e-3);
  const LossResult two = SoftmaxCrossEntropyLoss(Tensor::FromVector(Shape{1, 2}, {0.0f, std::log(3.0f)}), {0});
  EXPECT_NEAR(two.loss, std::log(4.0), 1e-6);  // p(0) = 1/4
  EXPECT_NEAR(two.grad.at(0), 0.25 - 1.0, 1e-6);
  EXPECT_NEAR(two.grad.at(1), 0.75, 1e-6);
}

TEST(LossesTest, SoftmaxCrossEntropyGradientMatchesFiniteDifferences) {
  const Tensor logits = RandomTensor(Shape{5, 7}, 4, 3.0f);
  const std::vector<int32_t> labels = {0, 6, 3, 3, 1};
  const LossResult r = SoftmaxCrossEntropyLoss(logits, labels);
  CheckGradientOf([&] { return SoftmaxCrossEntropyLoss(logits, labels).loss; }, logits, r.grad, "softmax ce",
                  LossOptions());
}

TEST(LossesTest, L1KnownValues) {
  const Tensor pred = Tensor::FromVector(Shape{2, 2}, {1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor target = Tensor::FromVector(Shape{2, 2}, {0.0f, 2.0f, 5.0f, 3.5f});
  const LossResult r = L1Loss(Context{}, pred, target);
  EXPECT_NEAR(r.loss, (1.0 + 0.0 + 2.0 + 0.5) / 4.0, 1e-7);
  EXPECT_EQ(r.grad.at(0), 0.25f);
  EXPECT_EQ(r.grad.at(1), 0.0f);
  EXPECT_EQ(r.grad.at(2), -0.25f);
}

TEST(LossesTest, L1GradientMatchesFiniteDifferences) {
  // Every |pred - target| >= 0.1, so the central differences never cross a kink.
  const Tensor pred = RandomTensor(Shape{3, 8}, 2);
  const Tensor offset = RandomTensor(Shape{3, 8}, 3);
  Tensor target = Tensor::Zeros(pred.shape());
  for (int64_t i = 0; i < pred.numel(); ++i) {
    const float o = offset.at(i);
    target.data()[i] = pred.at(i) + (o >= 0.0f ? 0.1f + o : o - 0.1f);
  }
  const LossResult r = L1Loss(Context{}, pred, target);
  CheckGradientOf([&] { return L1Loss(Context{}, pred, target).loss; }, pred, r.grad, "l1 pred",
                  LossOptions());
}

}  // namespace
}  // namespace gantry
