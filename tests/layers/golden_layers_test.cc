// Every parameterised layer against PyTorch (tests/golden/<case>/, written by
// scripts/make_goldens.py): forward output, input gradient and parameter gradients for
// the same inputs, parameters and upstream gradient; for BatchNorm also the running
// statistics after one training forward and the eval-mode output with them.
//
// Tolerances. The goldens are float64 results on exact float32 inputs, rounded once, so
// every difference is the C++ side's fp32 rounding. The largest reduction here has
// K = 100 products (ConvTranspose2d: 4 channels x 25 taps; BatchNorm sums 100 pixels),
// whose fp32 error is ~sqrt(K) * 6e-8 of the value scale typically and K * 6e-8 in the
// worst case. We allow 1e-5 of the tensor's largest |value| plus 1e-5 relative: above the
// worst case, while a wrong index, layout, stride, padding or formula moves elements by
// a sizeable fraction of the value scale (>= 1e-2 here), so no such bug fits inside.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/instance_norm.h"
#include "worker/layers/linear.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {
namespace {

using testing::ExpectAllClose;
using testing::LoadGolden;
using testing::MaxAbs;

constexpr double kRel = 1e-5;

void ExpectClose(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ExpectAllClose(actual, expected, kRel * MaxAbs(expected), kRel, what);
}

// Runs `layer` on the golden case `name`: loads params (and, for BatchNorm, buffers),
// one training Forward + Backward, and compares y, dx and the parameter gradients.
// A second Backward without the input gradient must return an undefined tensor and
// add the same parameter gradients again (the accumulate contract GAN steps rely on).
// Returns the FlatParameters so BatchNorm can check its buffers and eval mode.
std::unique_ptr<FlatParameters> RunLayerCase(const std::string& name, Layer& layer, bool has_buffers) {
  auto params = std::make_unique<FlatParameters>(std::vector<Layer*>{&layer});
  const Tensor x = LoadGolden(name, "x.npy");
  const Tensor golden_params = LoadGolden(name, "params.npy");
  const Tensor dy = LoadGolden(name, "dy.npy");
  const Tensor dparams = LoadGolden(name, "dparams.npy");
  EXPECT_EQ(params->num_params(), golden_params.numel()) << name << ": parameter count differs from torch";
  if (params->num_params() != golden_params.numel()) return params;
  params->params().CopyFrom(golden_params);
  if (has_buffers) {
    const Tensor buffers = LoadGolden(name, "buffers.npy");
    EXPECT_EQ(params->buffers().numel(), buffers.numel()) << name << ": buffer count differs from torch";
    if (params->buffers().numel() != buffers.numel()) return params;
    params->buffers().CopyFrom(buffers);
  }
  params->ZeroGrads();

  Context ctx;
  ctx.training = true;
  ActivationCache cache;
  const Tensor y = layer.Forward(ctx, x, &cache);
  EXPECT_EQ(layer.OutputShape(x.shape()), y.shape()) << name << ": OutputShape disagrees with Forward";
  const Tensor golden_y = LoadGolden(name, "y.npy");
  // A wrong shape makes Backward CHECK-fail on dy; report it as a test failure instead.
  EXPECT_EQ(y.shape(), golden_y.shape()) << name << ": output shape differs from torch";
  if (y.shape() != golden_y.shape()) return params;
  ExpectClose(y, golden_y, name + " y");

  const Tensor dx = layer.Backward(ctx, dy, cache, /*want_input_grad=*/true);
  ExpectClose(dx, LoadGolden(name, "dx.npy"), name + " dx");
  ExpectClose(params->grads(), dparams, name + " dparams");

  const Tensor none = layer.Backward(ctx, dy, cache, /*want_input_grad=*/false);
  EXPECT_FALSE(none.defined()) << name << ": Backward returned dx although want_input_grad was false";
  Tensor twice = dparams.Clone();
  for (int64_t i = 0; i < twice.numel(); ++i) twice.data()[i] *= 2.0f;
  ExpectAllClose(params->grads(), twice, 2 * kRel * MaxAbs(dparams), kRel,
                 name + " dparams after a second Backward (must accumulate)");
  return params;
}

TEST(GoldenLayersTest, Linear) {
  Linear layer(7, 5, /*bias=*/true);
  RunLayerCase("linear", layer, false);
}

TEST(GoldenLayersTest, Conv2dStride1NoBiasNonSquare) {
  Conv2d layer(3, 4, /*kernel=*/3, /*stride=*/1, /*padding=*/1, /*bias=*/false);
  RunLayerCase("conv2d_s1", layer, false);
}

TEST(GoldenLayersTest, Conv2dStride2WithBias) {
  Conv2d layer(3, 4, /*kernel=*/5, /*stride=*/2, /*padding=*/2, /*bias=*/true);
  RunLayerCase("conv2d_s2", layer, false);
}

TEST(GoldenLayersTest, ConvTranspose2dStride1) {
  ConvTranspose2d layer(4, 3, /*kernel=*/5, /*stride=*/1, /*padding=*/2, /*output_padding=*/0, /*bias=*/false);
  RunLayerCase("conv_transpose2d_s1", layer, false);
}

TEST(GoldenLayersTest, ConvTranspose2dStride2OutputPadding1) {
  ConvTranspose2d layer(4, 3, /*kernel=*/5, /*stride=*/2, /*padding=*/2, /*output_padding=*/1, /*bias=*/false);
  RunLayerCase("conv_transpose2d_s2_op1", layer, false);
}

// BatchNorm: the training case above, then the running statistics it left behind
// (momentum 0.99 Keras = 0.01 PyTorch, unbiased variance) and an eval-mode forward that
// normalises with them and leaves them unchanged.
void RunBatchNormCase(const std::string& name, int64_t channels) {
  BatchNorm layer(channels, /*eps=*/1e-3f, /*momentum=*/0.99f);
  std::unique_ptr<FlatParameters> params = RunLayerCase(name, layer, true);

  const Tensor buffers_after = LoadGolden(name, "buffers_after.npy");
  ExpectClose(params->buffers(), buffers_after, name + " running_mean, running_var after one training forward");

  Context eval;
  eval.training = false;
  ActivationCache cache;
  const Tensor y_eval = layer.Forward(eval, LoadGolden(name, "x.npy"), &cache);
  ExpectClose(y_eval, LoadGolden(name, "y_eval.npy"), name + " eval-mode y");
  ExpectClose(params->buffers(), buffers_after, name + " running stats after an eval forward (must not move)");
}

TEST(GoldenLayersTest, BatchNorm1d) { RunBatchNormCase("batch_norm1d", 5); }

TEST(GoldenLayersTest, BatchNorm2d) { RunBatchNormCase("batch_norm2d", 3); }

// torch.nn.InstanceNorm2d's defaults (eps 1e-5, no affine parameters, no running
// statistics): output and input gradient; it sums 30 pixels per plane.
TEST(GoldenLayersTest, InstanceNorm2d) {
  const std::string name = "instance_norm2d";
  InstanceNorm layer(4, 1e-5f);
  const Tensor x = LoadGolden(name, "x.npy");
  ActivationCache cache;
  const Tensor y = layer.Forward(Context{}, x, &cache);
  ExpectClose(y, LoadGolden(name, "y.npy"), name + " y");
  ExpectClose(layer.Backward(Context{}, LoadGolden(name, "dy.npy"), cache, true), LoadGolden(name, "dx.npy"),
              name + " dx");
}

}  // namespace
}  // namespace gantry
