#include "worker/layers/conv2d.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "tests/testing/layer_contract.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::ExpectAllClose;
using ::gantry::testing::RandomTensor;

Tensor ParamView(const FlatParameters& p, size_t i) {
  const FlatParameters::Entry& e = p.param_entries()[i];
  return p.params().ViewAt(e.offset, e.spec.shape);
}

// Direct convolution from the definition, in double; w is [O, C, k, k].
Tensor NaiveConv2d(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t s, int64_t p) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(0), k = w.dim(2);
  const int64_t ho = (h + 2 * p - k) / s + 1, wo = (wd + 2 * p - k) / s + 1;
  Tensor y = Tensor::Zeros(Shape{n, o, ho, wo});
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < o; ++oc) {
      for (int64_t oy = 0; oy < ho; ++oy) {
        for (int64_t ox = 0; ox < wo; ++ox) {
          double sum = bias != nullptr ? bias->at(oc) : 0.0;
          for (int64_t ic = 0; ic < c; ++ic) {
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = oy * s - p + ky, ix = ox * s - p + kx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                sum += static_cast<double>(x.at(((b * c + ic) * h + iy) * wd + ix)) *
                       w.at(((oc * c + ic) * k + ky) * k + kx);
              }
            }
          }
          y.data()[((b * o + oc) * ho + oy) * wo + ox] = static_cast<float>(sum);
        }
      }
    }
  }
  return y;
}

TEST(Conv2dTest, DcganShapes) {
  EXPECT_EQ(Conv2d(1, 64, 5, 2, 2, true).OutputShape(Shape{8, 1, 28, 28}), (Shape{8, 64, 14, 14}));
  EXPECT_EQ(Conv2d(64, 128, 5, 2, 2, true).OutputShape(Shape{8, 64, 14, 14}), (Shape{8, 128, 7, 7}));
  EXPECT_EQ(Conv2d(3, 2, 3, 1, 0, false).OutputShape(Shape{1, 3, 6, 5}), (Shape{1, 2, 4, 3}));
  EXPECT_EQ(Conv2d(3, 2, 4, 3, 1, false).OutputShape(Shape{1, 3, 9, 8}), (Shape{1, 2, 3, 3}));
}

TEST(Conv2dTest, ParamSpecs) {
  Conv2d layer(3, 4, 5, 2, 2, /*bias=*/true);
  EXPECT_EQ(layer.name(), "conv2d");
  const std::vector<ParamSpec> specs = layer.ParamSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "weight");
  EXPECT_EQ(specs[0].shape, (Shape{4, 3, 5, 5}));
  EXPECT_EQ(specs[0].init, Init::kGlorotUniform);
  EXPECT_EQ(specs[0].fan_in, 3 * 25);
  EXPECT_EQ(specs[0].fan_out, 4 * 25);
  EXPECT_EQ(specs[1].name, "bias");
  EXPECT_EQ(specs[1].shape, (Shape{4}));
  EXPECT_EQ(Conv2d(3, 4, 5, 2, 2, /*bias=*/false).ParamSpecs().size(), 1u);
}

struct Config {
  int64_t in, out, kernel, stride, padding;
  Shape input;
};

std::vector<Config> Configs() {
  return {
      {2, 3, 3, 1, 1, Shape{2, 2, 5, 6}},
      {3, 2, 5, 2, 2, Shape{2, 3, 8, 7}},  // the DCGAN discriminator's geometry
      {1, 2, 3, 2, 0, Shape{1, 1, 7, 7}},
      {2, 2, 4, 3, 2, Shape{1, 2, 9, 10}},
  };
}

TEST(Conv2dTest, ForwardMatchesDirectConvolution) {
  for (const Config& cfg : Configs()) {
    for (bool bias : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "k=" << cfg.kernel << " s=" << cfg.stride << " p=" << cfg.padding << " bias=" << bias);
      Conv2d layer(cfg.in, cfg.out, cfg.kernel, cfg.stride, cfg.padding, bias);
      Layer* layers[] = {&layer};
      FlatParameters params(layers);
      params.params().CopyFrom(RandomTensor(params.params().shape(), 1));
      const Tensor x = RandomTensor(cfg.input, 2);
      const Tensor b = bias ? ParamView(params, 1) : Tensor();
      const Tensor expected =
          NaiveConv2d(x, ParamView(params, 0), bias ? &b : nullptr, cfg.stride, cfg.padding);
      ActivationCache cache;
      const Tensor y = layer.Forward(Context{}, x, &cache);
      ASSERT_EQ(y.shape(), expected.shape());
      for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.at(i), expected.at(i), 1e-4) << "at " << i;
    }
  }
}

TEST(Conv2dTest, GradientsMatchFiniteDifferences) {
  for (const Config& cfg : Configs()) {
    SCOPED_TRACE(::testing::Message() << "k=" << cfg.kernel << " s=" << cfg.stride << " p=" << cfg.padding);
    Conv2d layer(cfg.in, cfg.out, cfg.kernel, cfg.stride, cfg.padding, /*bias=*/true);
    Layer* layers[] = {&layer};
    FlatParameters params(layers);
    Rng rng(3);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    CheckLayerGradients(layer, &params, cfg.input, Context{});
  }
}

TEST(Conv2dTest, NoParamGradsLeavesGradsUntouched) {
  Conv2d layer(2, 3, 3, 2, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsFlagHonoured(layer, params, Shape{2, 2, 6, 6});
}

TEST(Conv2dTest, ParamGradsAccumulate) {
  Conv2d layer(2, 3, 3, 2, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsAccumulate(layer, params, Shape{2, 2, 5, 5});
}

TEST(Conv2dTest, ForwardCanRunTwiceBeforeBackward) {
  Conv2d layer(1, 2, 3, 1, 1, /*bias=*/false);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(10);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  const Tensor x1 = RandomTensor(Shape{1, 1, 4, 4}, 11), x2 = RandomTensor(Shape{3, 1, 6, 5}, 12);
  ActivationCache c1, c2;
  layer.Forward(Context{}, x1, &c1);
  layer.Forward(Context{}, x2, &c2);
  const Tensor dy = RandomTensor(layer.OutputShape(x1.shape()), 13);
  params.ZeroGrads();
  layer.Backward(Context{}, dy, c1, /*want_input_grad=*/false);
  // dW[0,0,1,1] (the centre tap) with stride 1 and padding 1 is <dy[0,0], x1[0,0]>.
  double expected = 0.0;
  for (int64_t i = 0; i < 16; ++i) expected += static_cast<double>(dy.at(i)) * x1.at(i);
  EXPECT_NEAR(params.grads().at(4), expected, 1e-5);
}

// The reference backend lowers a batch a chunk of samples at a time (see
// CheckChunkedBatchMatchesOneChunk).
TEST(Conv2dTest, ChunkedBatchMatchesOneChunk) {
  Conv2d layer(3, 2, 5, 2, 2, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  testing::CheckChunkedBatchMatchesOneChunk(layer, params, Shape{5, 3, 8, 7}, /*column_floats_per_sample=*/3 * 25 * 4 * 4);
}

TEST(Conv2dTest, ChunkedGradientsMatchFiniteDifferences) {
  Conv2d layer(3, 2, 5, 2, 2, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(24);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  EigenCpuBackend backend;
  backend.set_max_column_floats(2 * 3 * 25 * 4 * 4);  // batch 3: chunks of 2 and 1
  Context ctx;
  ctx.backend = &backend;
  CheckLayerGradients(layer, &params, Shape{3, 3, 8, 7}, ctx);
}

}  // namespace
}  // namespace gantry
