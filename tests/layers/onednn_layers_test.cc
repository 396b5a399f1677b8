// The matrix-product layers (Conv2d, ConvTranspose2d, Linear) on the oneDNN backend:
// finite-difference gradient checks, and forward/backward against the Eigen reference at
// fp32 and at bf16 (where both sides round the same operands, so only fp32 summation
// order separates them).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/linear.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using testing::ExpectAllClose;
using testing::MaxAbs;
using testing::RandomTensor;

struct LayerCase {
  std::string name;
  std::function<std::unique_ptr<Layer>()> make;
  Shape input;
};

std::vector<LayerCase> Cases() {
  return {
      {"conv2d DCGAN D conv2 (small)", [] { return std::make_unique<Conv2d>(64, 128, 5, 2, 2, true); },
       Shape{2, 64, 14, 14}},
      {"conv2d odd", [] { return std::make_unique<Conv2d>(3, 5, 3, 2, 1, true); }, Shape{3, 3, 9, 7}},
      {"convT DCGAN G deconv2 (small)", [] { return std::make_unique<ConvTranspose2d>(128, 64, 5, 2, 2, 1, false); },
       Shape{2, 128, 7, 7}},
      {"convT s1", [] { return std::make_unique<ConvTranspose2d>(6, 4, 5, 1, 2, 0, true); }, Shape{1, 6, 5, 6}},
      {"convT s3 op2", [] { return std::make_unique<ConvTranspose2d>(2, 3, 4, 3, 1, 2, true); }, Shape{3, 2, 3, 5}},
      // Every pass on oneDNN's kernels, so the backward shares dy (g) between its two.
      {"conv2d blocked", [] { return std::make_unique<Conv2d>(16, 32, 4, 2, 1, false); }, Shape{2, 16, 16, 16}},
      {"convT blocked", [] { return std::make_unique<ConvTranspose2d>(32, 16, 4, 2, 1, 0, false); },
       Shape{2, 32, 8, 8}},
      // One output channel: the direct kernels (one_output_conv.h).
      {"conv2d PatchGAN logits", [] { return std::make_unique<Conv2d>(24, 1, 4, 1, 1, true); }, Shape{2, 24, 9, 9}},
      {"linear", [] { return std::make_unique<Linear>(37, 11, true); }, Shape{3, 37}},
  };
}

struct OnednnPass {
  Tensor y, dx, grads;
};

OnednnPass RunPass(const LayerCase& c, Backend& backend, MathPrecision precision) {
  std::unique_ptr<Layer> layer = c.make();
  Layer* layers[] = {layer.get()};
  FlatParameters params(layers);
  Rng rng(7);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  params.ZeroGrads();
  Context ctx;
  ctx.backend = &backend;
  ctx.precision = precision;
  const Tensor x = RandomTensor(c.input, 8);
  ActivationCache cache;
  OnednnPass pass;
  pass.y = layer->Forward(ctx, x, &cache);
  pass.dx = layer->Backward(ctx, RandomTensor(pass.y.shape(), 9), cache, /*want_input_grad=*/true);
  pass.grads = params.grads().Clone();
  return pass;
}

void ExpectPassesClose(const OnednnPass& a, const OnednnPass& b, double rel) {
  ExpectAllClose(a.y, b.y, rel * MaxAbs(b.y), 0, "y");
  ExpectAllClose(a.dx, b.dx, rel * MaxAbs(b.dx), 0, "dx");
  ExpectAllClose(a.grads, b.grads, rel * MaxAbs(b.grads), 0, "parameter gradients");
}

TEST(OnednnLayersTest, MatchTheReferenceAtFp32AndBf16) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (const LayerCase& c : Cases()) {
    for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
      SCOPED_TRACE(c.name + " " + std::string(MathPrecisionName(prec)));
      ExpectPassesClose(RunPass(c, *onednn, prec), RunPass(c, CpuBackend(), prec), 2e-5);
    }
  }
}

TEST(OnednnLayersTest, GradientsMatchFiniteDifferences) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  Context ctx;
  ctx.backend = onednn;
  for (const LayerCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Layer> layer = c.make();
    Layer* layers[] = {layer.get()};
    FlatParameters params(layers);
    Rng rng(3);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    testing::CheckLayerGradients(*layer, &params, c.input, ctx);
  }
}

}  // namespace
}  // namespace gantry
