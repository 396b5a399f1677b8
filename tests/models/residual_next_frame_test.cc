// --predict delta (worker/models/residual_next_frame.h): the generator returns the
// condition's frame plus its network's output, gradients included, and its flat layout
// differs from the frame-predicting generator's so checkpoints of one mode do not load
// into the other.
#include "worker/models/residual_next_frame.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "tests/testing/layer_contract.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/models/pix2pix.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::RandomTensor;
using ::testing::StartsWith;

// A 3x3 convolution from the 4 condition channels to 3: an inner network with
// parameters whose output depends on neighbours, unlike the added input.
std::unique_ptr<Layer> Conv4To3() { return std::make_unique<Conv2d>(4, 3, 3, 1, 1, /*bias=*/true); }

TEST(ResidualNextFrameTest, OutputIsTheInputFramePlusTheInnerOutput) {
  auto owned = Conv4To3();
  Layer* conv = owned.get();
  ResidualNextFrame residual(std::move(owned));
  std::vector<Layer*> layers = {&residual};
  FlatParameters params(layers);
  Rng rng(3);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  const Tensor x = RandomTensor(Shape{2, 4, 5, 6}, 11);
  ActivationCache inner_cache, cache;
  const Tensor change = conv->Forward(Context{}, x, &inner_cache);
  const Tensor y = residual.Forward(Context{}, x, &cache);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 5, 6}));
  const int64_t plane = 5 * 6;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 3 * plane; ++k) {
      ASSERT_FLOAT_EQ(y.at(i * 3 * plane + k), x.at(i * 4 * plane + k) + change.at(i * 3 * plane + k))
          << "sample " << i << " element " << k;
    }
  }
  EXPECT_GT(std::abs(change.at(0)), 0.0f);  // the inner part is not zero, so the sum is tested
}

TEST(ResidualNextFrameTest, GradientsMatchFiniteDifferences) {
  ResidualNextFrame residual(Conv4To3());
  std::vector<Layer*> layers = {&residual};
  FlatParameters params(layers);
  Rng rng(5);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  CheckLayerGradients(residual, &params, Shape{2, 4, 4, 5}, Context{});
}

TEST(ResidualNextFrameTest, HonoursTheLayerContract) {
  ResidualNextFrame residual(Conv4To3());
  std::vector<Layer*> layers = {&residual};
  FlatParameters params(layers);
  Rng rng(7);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  gantry::testing::CheckParamGradsFlagHonoured(residual, params, Shape{2, 4, 4, 4});
  gantry::testing::CheckParamGradsAccumulate(residual, params, Shape{2, 4, 4, 4});
}

TEST(ResidualNextFrameTest, ParametersAndBuffersAreTheInnersUnderItsName) {
  auto bn = std::make_unique<BatchNorm>(3);  // buffers too
  const std::vector<ParamSpec> inner_params = bn->ParamSpecs();
  const std::vector<ParamSpec> inner_buffers = bn->BufferSpecs();
  ResidualNextFrame residual(std::move(bn));
  ASSERT_EQ(residual.ParamSpecs().size(), inner_params.size());
  ASSERT_EQ(residual.BufferSpecs().size(), inner_buffers.size());
  for (size_t i = 0; i < inner_params.size(); ++i) {
    EXPECT_EQ(residual.ParamSpecs()[i].name, "batch_norm." + inner_params[i].name);
    EXPECT_EQ(residual.ParamSpecs()[i].shape, inner_params[i].shape);
  }
  for (size_t i = 0; i < inner_buffers.size(); ++i) {
    EXPECT_EQ(residual.BufferSpecs()[i].name, "batch_norm." + inner_buffers[i].name);
  }
}

Pix2pixConfig Tiny(NextFramePrediction predict) {
  Pix2pixConfig c;
  c.image_size = 32;
  c.ngf = 4;
  c.ndf = 4;
  c.predict = predict;
  return c;
}

// At N(0, 0.02) initialisation the U-Net's output is small, and with all its parameters
// zero it is tanh(0) = 0: a delta generator then IS persistence, exactly.
TEST(ResidualNextFrameTest, ADeltaGeneratorWhoseUNetOutputsZeroCopiesTheInputFrame) {
  Pix2pix model(Tiny(NextFramePrediction::kDelta));
  model.g_params().params().Fill(0.0f);
  const Tensor x = RandomTensor(Shape{2, 4, 32, 32}, 13);
  Context ctx;
  ctx.training = false;
  SequentialCache cache;
  const Tensor y = model.generator().Forward(ctx, x, &cache);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 32, 32}));
  const int64_t plane = 32 * 32;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 3 * plane; ++k) ASSERT_EQ(y.at(i * 3 * plane + k), x.at(i * 4 * plane + k)) << i << " " << k;
  }
}

TEST(ResidualNextFrameTest, DeltaAndFrameGeneratorsHaveTheSameSizesButDistinctLayouts) {
  Pix2pix delta(Tiny(NextFramePrediction::kDelta));
  Pix2pix frame(Tiny(NextFramePrediction::kFrame));
  EXPECT_EQ(delta.g_params().num_params(), frame.g_params().num_params());
  EXPECT_EQ(delta.g_params().buffers().numel(), frame.g_params().buffers().numel());
  EXPECT_THAT(delta.g_params().param_entries().front().name, StartsWith("0.residual.unet."));
  EXPECT_THAT(frame.g_params().param_entries().front().name, StartsWith("0.unet."));
  EXPECT_EQ(delta.unet().depth(), frame.unet().depth());  // unet() reaches the inner U-Net
}

}  // namespace
}  // namespace gantry
