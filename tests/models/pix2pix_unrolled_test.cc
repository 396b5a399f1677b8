// Unrolled training of the Pix2Pix next-frame model (--unroll; pix2pix.h, pix2pix_unrolled.cc):
// the window's row contract, finite-difference checks of both networks' gradients through
// several autoregressive steps, the pushforward trick against a one-step model on the
// detached last input, the last-step loss, and the curriculum.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/concat.h"
#include "worker/models/pix2pix.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckGradientOf;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;

constexpr int64_t kSize = 32;
constexpr int64_t kPlane = kSize * kSize;

// A small next-frame model without dropout (its masks differ per step by design; fixed
// weights and inputs then give one loss function to differentiate).
Pix2pixConfig Unrolled(int64_t steps, UnrollLoss loss = UnrollLoss::kEvery, bool pushforward = false) {
  Pix2pixConfig c;
  c.image_size = kSize;
  c.ngf = 4;
  c.ndf = 4;
  c.dropout = 0;
  c.l1_weight = 3.0f;
  c.unroll = UnrollConfig{.steps = steps, .loss = loss, .pushforward = pushforward};
  return c;
}

// Windows of `steps` targets: values in [-1, 1] with a 0/1 mask in channel 3.
Tensor Windows(int64_t n, int64_t steps, uint64_t seed) {
  Tensor rows = RandomTensor(Shape{n, 4 + 3 * steps, kSize, kSize}, seed);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < kPlane; ++p) {
      float& m = rows.data()[(i * (4 + 3 * steps) + 3) * kPlane + p];
      m = m > 0.6f ? 1.0f : 0.0f;
    }
  }
  return rows;
}

// The one-step pairs of windows: each window's condition and first target.
Tensor FirstPairs(const Tensor& windows) {
  const int64_t n = windows.dim(0), channels = windows.dim(1);
  Tensor pairs = Tensor::Uninitialized(Shape{n, 7, kSize, kSize});
  for (int64_t i = 0; i < n; ++i) {
    pairs.ViewAt(i * 7 * kPlane, Shape{7 * kPlane}).CopyFrom(windows.ViewAt(i * channels * kPlane, Shape{7 * kPlane}));
  }
  return pairs;
}

GanInputs AllRows(const Pix2pix& model, const Tensor& rows) {
  Rng rng(1);
  return model.StepInputs(rows, rng, rows.dim(0), 0, rows.dim(0), Device::kCpu);
}

TEST(Pix2pixUnrolledTest, RowsAreWindowsOfMTargets) {
  const Pix2pix model(Unrolled(3));
  EXPECT_EQ(model.SampleShape(), (Shape{13, kSize, kSize}));
  const Tensor rows = Windows(2, 3, 3);
  const GanInputs in = AllRows(model, rows);
  ASSERT_EQ(in.generator_input.shape(), (Shape{2, 4, kSize, kSize}));
  ASSERT_EQ(in.real.shape(), (Shape{2, 9, kSize, kSize}));
  EXPECT_EQ(in.real.at(9 * kPlane + 8 * kPlane + 5), rows.at(13 * kPlane + 12 * kPlane + 5));
  // The epochs' samples come from one-step validation pairs, whatever the window.
  const Tensor pairs = RandomTensor(Shape{2, 7, kSize, kSize}, 4);
  EXPECT_EQ(model.SampleInputsFromRows(pairs).shape(), (Shape{2, 4, kSize, kSize}));
}

// Central differences of g_loss against G's gradient and of d_loss against D's, every
// parameter tensor probed, through two steps with the loss on each. Calibration as
// pix2pix_test's whole-network checks (step 1e-3, 15 %); InstanceNorm, because chained
// U-Nets with BatchNorm are too curved at this step (the directional check below covers them).
TEST(Pix2pixUnrolledGradientTest, EveryParameterTensorThroughTwoSteps) {
  Pix2pixConfig config = Unrolled(2);
  config.norm = NormKind::kInstance;
  Pix2pix model(config);
  Rng init(5);
  model.g_params().Initialize(InitScheme::kGlorotUniform, init);  // gradients well above the floor
  model.d_params().Initialize(InitScheme::kGlorotUniform, init);
  const GanInputs in = AllRows(model, Windows(2, config.unroll.steps, 6));
  Context ctx;
  ctx.dropout_seed = 9;
  model.ComputeGradients(ctx, in, GanLossWeights{});
  const Tensor g_grads = model.g_params().grads().Clone();
  const Tensor d_grads = model.d_params().grads().Clone();
  auto g_loss = [&]() { return model.ComputeGradients(ctx, in, GanLossWeights{}).g_loss; };
  auto d_loss = [&]() { return model.ComputeGradients(ctx, in, GanLossWeights{}).d_loss; };
  GradCheckOptions options;
  options.step = 1e-3;
  options.tolerance = 0.15;
  options.floor = 0.05;
  options.max_checks = 4;
  for (const FlatParameters::Entry& e : model.g_params().param_entries()) {
    const Shape s{e.spec.shape.numel()};
    CheckGradientOf(g_loss, model.g_params().params().ViewAt(e.offset, s), g_grads.ViewAt(e.offset, s),
                    "G " + e.name, options);
  }
  for (const FlatParameters::Entry& e : model.d_params().param_entries()) {
    const Shape s{e.spec.shape.numel()};
    CheckGradientOf(d_loss, model.d_params().params().ViewAt(e.offset, s), d_grads.ViewAt(e.offset, s),
                    "D " + e.name, options);
  }
}

// The derivative of a network's loss along its own unit gradient direction is the
// gradient's norm. Central differences of the whole step at a small step (1e-4 in
// parameter units, all parameters moved at once, so fp32 noise averages out): three
// BatchNorm U-Nets chained with Glorot weights (and their kinks) are curved enough that
// G's difference quotient approaches the norm slowly, measured 94 % of it at a step of
// 1e-3, 95.7-97.0 % at 3e-4, 97.3-98.1 % at 1e-4 (D's within 0.01 % from 6e-4 down), so
// the 5 % bound keeps a margin; a gradient missing the path through an earlier step's
// prediction is off by more (dropping the condition's part fails it; tried).
double DirectionalDerivative(Pix2pix& model, FlatParameters& params, const GanInputs& in, bool g, double step,
                             double* norm) {
  Context ctx;
  ctx.dropout_seed = 9;
  model.ComputeGradients(ctx, in, GanLossWeights{});
  const Tensor grad = params.grads().Clone();
  const Tensor start = params.params().Clone();
  double squares = 0;
  for (int64_t i = 0; i < grad.numel(); ++i) squares += static_cast<double>(grad.at(i)) * grad.at(i);
  *norm = std::sqrt(squares);
  double loss[2];
  for (int side = 0; side < 2; ++side) {
    const double move = (side == 0 ? step : -step) / *norm;
    for (int64_t i = 0; i < grad.numel(); ++i) {
      params.params().data()[i] = static_cast<float>(start.at(i) + move * grad.at(i));
    }
    const GanStepResult r = model.ComputeGradients(ctx, in, GanLossWeights{});
    loss[side] = g ? r.g_loss : r.d_loss;
  }
  params.params().CopyFrom(start);
  return (loss[0] - loss[1]) / (2 * step);
}

void CheckDirectionalDerivatives(const Pix2pixConfig& config) {
  Pix2pix model(config);
  Rng init(5);
  model.g_params().Initialize(InitScheme::kGlorotUniform, init);
  model.d_params().Initialize(InitScheme::kGlorotUniform, init);
  const GanInputs in = AllRows(model, Windows(2, config.unroll.steps, 6));
  double norm = 0;
  const double g = DirectionalDerivative(model, model.g_params(), in, /*g=*/true, 1e-4, &norm);
  EXPECT_NEAR(g, norm, 0.05 * norm) << "G";
  const double d = DirectionalDerivative(model, model.d_params(), in, /*g=*/false, 1e-4, &norm);
  EXPECT_NEAR(d, norm, 0.05 * norm) << "D";
}

TEST(Pix2pixUnrolledGradientTest, ThreeStepsLossOnEvery) { CheckDirectionalDerivatives(Unrolled(3)); }
TEST(Pix2pixUnrolledGradientTest, ThreeStepsLossOnTheLast) { CheckDirectionalDerivatives(Unrolled(3, UnrollLoss::kLast)); }

// The unrolled gradient is not the one-step gradient: unrolling changes G's update (the
// test above would pass for a model that ignored the later steps only if they added nothing).
TEST(Pix2pixUnrolledTest, LaterStepsChangeTheGradient) {
  Pix2pix two(Unrolled(2));
  Pix2pix one(Unrolled(1));
  two.Initialize(InitScheme::kNormal002, 7);
  one.g_params().params().CopyFrom(two.g_params().params());
  one.d_params().params().CopyFrom(two.d_params().params());
  const Tensor rows = Windows(2, 2, 8);
  two.ComputeGradients(Context{}, AllRows(two, rows), GanLossWeights{});
  one.ComputeGradients(Context{}, AllRows(one, FirstPairs(rows)), GanLossWeights{});
  double diff = 0;
  for (int64_t i = 0; i < one.g_params().grads().numel(); ++i) {
    diff += std::fabs(one.g_params().grads().at(i) - two.g_params().grads().at(i));
  }
  EXPECT_GT(diff, 0.0);
}

// The model's G on `x` in training mode (no dropout here): what the unrolled step feeds
// to the next, with the window's mask.
Tensor NextInput(Pix2pix& model, const Tensor& x) {
  SequentialCache cache;
  const Tensor y = model.generator().Forward(Context{}, x, &cache);
  Tensor mask = Tensor::Uninitialized(Shape{x.dim(0), 1, kSize, kSize});
  for (int64_t i = 0; i < x.dim(0); ++i) {
    mask.ViewAt(i * kPlane, Shape{kPlane}).CopyFrom(x.ViewAt((i * 4 + 3) * kPlane, Shape{kPlane}));
  }
  return ConcatChannels().Forward(Context{}, y, mask);
}

// Pushforward: the gradients of a one-step model on the last step's input, taken as data,
// and its target. G's and the G loss match to round-off (D's loss differs by design: its
// real pair is the true frame before the target, not the prediction).
TEST(Pix2pixUnrolledTest, PushforwardIsTheOneStepGradientOnTheDetachedLastInput) {
  for (const bool pushforward : {true, false}) {
    Pix2pix unrolled(Unrolled(3, UnrollLoss::kLast, pushforward));
    unrolled.Initialize(InitScheme::kNormal002, 10);
    Pix2pix one(Unrolled(1));
    one.g_params().params().CopyFrom(unrolled.g_params().params());
    one.d_params().params().CopyFrom(unrolled.d_params().params());
    const Tensor rows = Windows(2, 3, 11);
    const GanInputs in = AllRows(unrolled, rows);
    const Tensor x2 = NextInput(one, NextInput(one, in.generator_input));
    Tensor pair = Tensor::Uninitialized(Shape{2, 7, kSize, kSize});
    for (int64_t i = 0; i < 2; ++i) {
      pair.ViewAt(i * 7 * kPlane, Shape{4 * kPlane}).CopyFrom(x2.ViewAt(i * 4 * kPlane, Shape{4 * kPlane}));
      pair.ViewAt((i * 7 + 4) * kPlane, Shape{3 * kPlane}).CopyFrom(in.real.ViewAt((i * 9 + 6) * kPlane, Shape{3 * kPlane}));
    }
    const GanStepResult u = unrolled.ComputeGradients(Context{}, in, GanLossWeights{});
    const GanStepResult o = one.ComputeGradients(Context{}, AllRows(one, pair), GanLossWeights{});
    EXPECT_NEAR(u.g_loss, o.g_loss, 1e-6 * std::fabs(o.g_loss));
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < one.g_params().grads().numel(); ++i) {
      diff += std::fabs(one.g_params().grads().at(i) - unrolled.g_params().grads().at(i));
      norm += std::fabs(one.g_params().grads().at(i));
    }
    if (pushforward) {
      EXPECT_LT(diff, 1e-5 * norm) << "pushforward: only the last step is in the graph";
    } else {
      EXPECT_GT(diff, 1e-3 * norm) << "without pushforward the earlier steps add their part";
    }
  }
}

// Loss on every step: the mean of the steps' losses, so its scale does not grow with M;
// loss weights scale the gradients as in the one-step path.
TEST(Pix2pixUnrolledTest, LossIsTheMeanOverTheStepsAndWeightsScaleIt) {
  Pix2pix model(Unrolled(2));
  model.Initialize(InitScheme::kNormal002, 12);
  const GanInputs in = AllRows(model, Windows(2, 2, 13));
  const GanStepResult every = model.ComputeGradients(Context{}, in, GanLossWeights{});
  const Tensor g1 = model.g_params().grads().Clone(), d1 = model.d_params().grads().Clone();
  model.ComputeGradients(Context{}, in, GanLossWeights{0.25f, 0.5f});
  for (int64_t i = 0; i < g1.numel(); ++i) ASSERT_FLOAT_EQ(model.g_params().grads().at(i), 0.5f * g1.at(i)) << i;
  for (int64_t i = 0; i < d1.numel(); ++i) ASSERT_FLOAT_EQ(model.d_params().grads().at(i), 0.25f * d1.at(i)) << i;
  // Each step's D loss is near log 2 at initialisation: the mean is too, not 2 log 2.
  EXPECT_NEAR(every.d_loss, std::log(2.0), 0.2);
}

TEST(Pix2pixUnrolledTest, CurriculumGrowsTheStepsWithTheEpochs) {
  Pix2pixConfig config = Unrolled(3);
  config.unroll.curriculum_epochs = 2;
  Pix2pix model(config);
  std::vector<int64_t> steps;
  for (int64_t epoch = 0; epoch < 7; ++epoch) {
    model.BeginEpoch(epoch);
    steps.push_back(model.unrolled_steps());
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 3}));
  // At one step the window's first target is the pair: the one-step model's losses.
  model.Initialize(InitScheme::kNormal002, 14);
  Pix2pix one(Unrolled(1));
  one.g_params().params().CopyFrom(model.g_params().params());
  one.d_params().params().CopyFrom(model.d_params().params());
  model.BeginEpoch(0);
  const Tensor rows = Windows(2, 3, 15);
  const GanStepResult a = model.ComputeGradients(Context{}, AllRows(model, rows), GanLossWeights{});
  const GanStepResult b = one.ComputeGradients(Context{}, AllRows(one, FirstPairs(rows)), GanLossWeights{});
  EXPECT_EQ(a.g_loss, b.g_loss);
  EXPECT_EQ(a.d_loss, b.d_loss);
}

}  // namespace
}  // namespace gantry
