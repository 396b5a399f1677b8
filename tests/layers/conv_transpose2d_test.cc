#include "worker/layers/conv_transpose2d.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "tests/testing/layer_contract.h"
#include "worker/layers/conv2d.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::ExpectAllClose;
using ::gantry::testing::RandomTensor;

Tensor TransposeParamView(const FlatParameters& p, size_t i) {
  const FlatParameters::Entry& e = p.param_entries()[i];
  return p.params().ViewAt(e.offset, e.spec.shape);
}

// Transposed convolution from the definition (every input pixel scatters a weighted
// kernel patch), in double; w is [C, O, k, k].
Tensor NaiveConvTranspose2d(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t s, int64_t p,
                            int64_t op) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t o = w.dim(1), k = w.dim(2);
  const int64_t ho = (h - 1) * s - 2 * p + k + op, wo = (wd - 1) * s - 2 * p + k + op;
  std::vector<double> acc(static_cast<size_t>(n * o * ho * wo), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ic = 0; ic < c; ++ic) {
      for (int64_t iy = 0; iy < h; ++iy) {
        for (int64_t ix = 0; ix < wd; ++ix) {
          const double v = x.at(((b * c + ic) * h + iy) * wd + ix);
          for (int64_t oc = 0; oc < o; ++oc) {
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t oy = iy * s - p + ky, ox = ix * s - p + kx;
                if (oy < 0 || oy >= ho || ox < 0 || ox >= wo) continue;
                acc[static_cast<size_t>(((b * o + oc) * ho + oy) * wo + ox)] +=
                    v * w.at(((ic * o + oc) * k + ky) * k + kx);
              }
            }
          }
        }
      }
    }
  }
  Tensor y = Tensor::Zeros(Shape{n, o, ho, wo});
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t oc = (i / (ho * wo)) % o;
    y.data()[i] = static_cast<float>(acc[static_cast<size_t>(i)] + (bias != nullptr ? bias->at(oc) : 0.0));
  }
  return y;
}

TEST(ConvTranspose2dTest, DcganShapes) {
  EXPECT_EQ(ConvTranspose2d(256, 128, 5, 1, 2, 0, false).OutputShape(Shape{8, 256, 7, 7}),
            (Shape{8, 128, 7, 7}));
  EXPECT_EQ(ConvTranspose2d(128, 64, 5, 2, 2, 1, false).OutputShape(Shape{8, 128, 7, 7}),
            (Shape{8, 64, 14, 14}));
  EXPECT_EQ(ConvTranspose2d(64, 1, 5, 2, 2, 1, true).OutputShape(Shape{8, 64, 14, 14}),
            (Shape{8, 1, 28, 28}));
  EXPECT_EQ(ConvTranspose2d(2, 3, 4, 3, 1, 2, true).OutputShape(Shape{1, 2, 3, 5}), (Shape{1, 3, 10, 16}));
}

TEST(ConvTranspose2dTest, ParamSpecs) {
  ConvTranspose2d layer(3, 4, 5, 2, 2, 1, /*bias=*/true);
  EXPECT_EQ(layer.name(), "conv_transpose2d");
  const std::vector<ParamSpec> specs = layer.ParamSpecs();
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "weight");
  EXPECT_EQ(specs[0].shape, (Shape{3, 4, 5, 5}));
  EXPECT_EQ(specs[0].init, Init::kGlorotUniform);
  EXPECT_EQ(specs[0].fan_in, 4 * 25);
  EXPECT_EQ(specs[0].fan_out, 3 * 25);
  EXPECT_EQ(specs[1].name, "bias");
  EXPECT_EQ(specs[1].shape, (Shape{4}));
  EXPECT_EQ(ConvTranspose2d(3, 4, 5, 2, 2, 1, /*bias=*/false).ParamSpecs().size(), 1u);
}

struct TransposeConfig {
  int64_t in, out, kernel, stride, padding, output_padding;
  Shape input;
};

std::vector<TransposeConfig> TransposeConfigs() {
  return {
      {2, 3, 3, 1, 1, 0, Shape{2, 2, 4, 5}},
      {3, 2, 5, 2, 2, 1, Shape{2, 3, 4, 3}},  // the DCGAN generator's geometry
      {1, 2, 3, 2, 0, 0, Shape{1, 1, 3, 3}},
      {2, 2, 4, 3, 2, 2, Shape{1, 2, 3, 4}},
  };
}

::testing::Message Describe(const TransposeConfig& cfg) {
  return ::testing::Message() << "k=" << cfg.kernel << " s=" << cfg.stride << " p=" << cfg.padding
                              << " op=" << cfg.output_padding;
}

TEST(ConvTranspose2dTest, ForwardMatchesDirectTransposedConvolution) {
  for (const TransposeConfig& cfg : TransposeConfigs()) {
    for (bool bias : {false, true}) {
      SCOPED_TRACE(Describe(cfg) << " bias=" << bias);
      ConvTranspose2d layer(cfg.in, cfg.out, cfg.kernel, cfg.stride, cfg.padding, cfg.output_padding, bias);
      Layer* layers[] = {&layer};
      FlatParameters params(layers);
      params.params().CopyFrom(RandomTensor(params.params().shape(), 1));
      const Tensor x = RandomTensor(cfg.input, 2);
      const Tensor b = bias ? TransposeParamView(params, 1) : Tensor();
      const Tensor expected = NaiveConvTranspose2d(x, TransposeParamView(params, 0), bias ? &b : nullptr, cfg.stride,
                                                   cfg.padding, cfg.output_padding);
      ActivationCache cache;
      const Tensor y = layer.Forward(Context{}, x, &cache);
      ASSERT_EQ(y.shape(), expected.shape());
      for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.at(i), expected.at(i), 1e-4) << "at " << i;
    }
  }
}

// With the same weights, ConvTranspose2d(O -> C) is the adjoint of Conv2d(C -> O).
TEST(ConvTranspose2dTest, IsTheAdjointOfConv2d) {
  for (const TransposeConfig& cfg : TransposeConfigs()) {
    SCOPED_TRACE(Describe(cfg));
    ConvTranspose2d convt(cfg.in, cfg.out, cfg.kernel, cfg.stride, cfg.padding, cfg.output_padding, false);
    Conv2d conv(cfg.out, cfg.in, cfg.kernel, cfg.stride, cfg.padding, false);
    Layer* layers[] = {&convt, &conv};
    FlatParameters params(layers);
    TransposeParamView(params, 0).CopyFrom(RandomTensor(TransposeParamView(params, 0).shape(), 3));
    TransposeParamView(params, 1).CopyFrom(TransposeParamView(params, 0));
    const Tensor x = RandomTensor(cfg.input, 4);
    const Tensor z = RandomTensor(convt.OutputShape(cfg.input), 5);
    ActivationCache cache;
    const Tensor convt_x = convt.Forward(Context{}, x, &cache);
    const Tensor conv_z = conv.Forward(Context{}, z, &cache);
    ASSERT_EQ(conv_z.shape(), x.shape());
    double lhs = 0.0, rhs = 0.0;
    for (int64_t i = 0; i < z.numel(); ++i) lhs += static_cast<double>(convt_x.at(i)) * z.at(i);
    for (int64_t i = 0; i < x.numel(); ++i) rhs += static_cast<double>(conv_z.at(i)) * x.at(i);
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1.0 + std::abs(lhs)));
  }
}

TEST(ConvTranspose2dTest, GradientsMatchFiniteDifferences) {
  for (const TransposeConfig& cfg : TransposeConfigs()) {
    SCOPED_TRACE(Describe(cfg));
    ConvTranspose2d layer(cfg.in, cfg.out, cfg.kernel, cfg.stride, cfg.padding, cfg.output_padding, true);
    Layer* layers[] = {&layer};
    FlatParameters params(layers);
    Rng rng(3);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    CheckLayerGradients(layer, &params, cfg.input, Context{});
  }
}

TEST(ConvTranspose2dTest, NoParamGradsLeavesGradsUntouched) {
  ConvTranspose2d layer(2, 3, 3, 2, 1, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsFlagHonoured(layer, params, Shape{2, 2, 3, 3});
}

TEST(ConvTranspose2dTest, ParamGradsAccumulate) {
  ConvTranspose2d layer(2, 3, 3, 2, 1, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(4);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  testing::CheckParamGradsAccumulate(layer, params, Shape{2, 2, 3, 4});
}

// The reference backend lowers a batch a chunk of samples at a time (see
// CheckChunkedBatchMatchesOneChunk).
TEST(ConvTranspose2dTest, ChunkedBatchMatchesOneChunk) {
  ConvTranspose2d layer(3, 2, 5, 2, 2, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  testing::CheckChunkedBatchMatchesOneChunk(layer, params, Shape{5, 3, 4, 3}, /*column_floats_per_sample=*/2 * 25 * 4 * 3);
}

TEST(ConvTranspose2dTest, ChunkedGradientsMatchFiniteDifferences) {
  ConvTranspose2d layer(3, 2, 5, 2, 2, 1, /*bias=*/true);
  Layer* layers[] = {&layer};
  FlatParameters params(layers);
  Rng rng(24);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  EigenCpuBackend backend;
  backend.set_max_column_floats(2 * 2 * 25 * 4 * 3);  // batch 3: chunks of 2 and 1
  Context ctx;
  ctx.backend = &backend;
  CheckLayerGradients(layer, &params, Shape{3, 3, 4, 3}, ctx);
}

}  // namespace
}  // namespace gantry
