// The Pix2Pix model (worker/models/pix2pix.h): shapes and sizes against the TF tutorial,
// one test per decision where the sources disagree, the losses and their weights, the
// data-row contract, inference-mode independence of the batch, and finite-difference
// checks of the whole U-Net and the whole PatchGAN (gradients into the flat buffers).
#include "worker/models/pix2pix.h"

#include <cmath>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "tests/testing/layer_contract.h"
#include "worker/layers/batch_norm.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckGradientOf;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;
using ::testing::HasSubstr;

Pix2pixConfig Small(int64_t size = 32, int64_t filters = 8, NormKind norm = NormKind::kBatch) {
  Pix2pixConfig c;
  c.image_size = size;
  c.ngf = filters;
  c.ndf = filters;
  c.norm = norm;
  return c;
}

int64_t CountParams(const Sequential& net) {
  int64_t n = 0;
  for (Layer* l : net.layers()) {
    for (const ParamSpec& s : l->ParamSpecs()) n += s.shape.numel();
  }
  return n;
}

int64_t CountBuffers(const Sequential& net) {
  int64_t n = 0;
  for (Layer* l : net.layers()) {
    for (const ParamSpec& s : l->BufferSpecs()) n += s.shape.numel();
  }
  return n;
}

std::vector<std::string> Names(const std::vector<Layer*>& layers) {
  std::vector<std::string> out;
  for (Layer* l : layers) out.push_back(l->name());
  return out;
}

// Rows of a batch: condition in channels 0-3, target in 4-6, values in [-1, 1].
Tensor Rows(int64_t n, int64_t size, uint64_t seed) { return RandomTensor(Shape{n, 7, size, size}, seed); }

TEST(Pix2pixTest, ShapesFollowTheImageSize) {
  struct Case {
    int64_t size, depth, logits;
  };
  for (const Case c : {Case{32, 5, 2}, Case{64, 6, 6}, Case{128, 7, 14}, Case{256, 8, 30}, Case{512, 8, 62}}) {
    const Pix2pixConfig config = Small(c.size, 1);
    const Sequential g = MakePix2pixGenerator(config);
    const Sequential d = MakePix2pixDiscriminator(config);
    EXPECT_EQ(UNetDepth(c.size), c.depth) << c.size;
    EXPECT_EQ(g.OutputShape(Shape{2, 4, c.size, c.size}), (Shape{2, 3, c.size, c.size})) << c.size;
    EXPECT_EQ(d.OutputShape(Shape{2, 7, c.size, c.size}), (Shape{2, 1, c.logits, c.logits})) << c.size;
    EXPECT_EQ(PatchGanLogitSide(c.size), c.logits);
  }
}

// At 256 px with ngf = ndf = 64 the networks are the tutorial's: its model.summary()
// reports 54,414,979 trainable generator parameters and 2,768,641 discriminator ones
// (10,880 and 1,792 BatchNorm moving statistics). Ours differ by exactly our decisions:
// one more input channel (the obstacle mask: +64*16 weights in each first convolution)
// and no BatchNorm at the bottleneck (-2*512 parameters, -2*512 statistics).
TEST(Pix2pixTest, TutorialSizeHasTheTutorialsParameterCounts) {
  const Pix2pixConfig config = Small(256, 64);
  const Sequential g = MakePix2pixGenerator(config);
  const Sequential d = MakePix2pixDiscriminator(config);
  EXPECT_EQ(CountParams(g), 54'414'979 + 64 * 16 - 2 * 512);
  EXPECT_EQ(CountBuffers(g), 10'880 - 2 * 512);
  EXPECT_EQ(CountParams(d), 2'768'641 + 64 * 16);
  EXPECT_EQ(CountBuffers(d), 1'792);
  const UNet unet(config, 4, 3);
  const std::vector<int64_t> want = {64, 128, 256, 512, 512, 512, 512, 512};
  ASSERT_EQ(unet.depth(), 8);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(unet.down_channels(i), want[static_cast<size_t>(i)]) << i;
}

TEST(Pix2pixTest, ImageSizesTheUNetCannotTakeAreNamed) {
  EXPECT_EQ(Pix2pixImageSizeProblem(32), "");
  EXPECT_EQ(Pix2pixImageSizeProblem(1024), "");
  EXPECT_THAT(Pix2pixImageSizeProblem(100), HasSubstr("power of two >= 32"));
  EXPECT_THAT(Pix2pixImageSizeProblem(100), HasSubstr("use 64 or 128"));
  EXPECT_THAT(Pix2pixImageSizeProblem(16), HasSubstr("use 32"));
}

// Decision: the tutorial's block order Conv -> BatchNorm -> LeakyReLU(0.2). Behaviourally:
// undoing a LeakyReLU of slope 0.2 on a down block's output must give exactly what a
// fresh BatchNorm (gamma 1, beta 0) gives: per channel mean 0 and variance 1. junyanz's
// order (norm last) would leave the output itself normalised, slope 0.3 (Keras) would
// leave the undone negatives 1.5x too small.
TEST(Pix2pixTest, DownBlocksAreConvNormLeakyReluWithSlopePointTwo) {
  Pix2pix model(Small());
  model.Initialize(InitScheme::kNormal002, 3);
  const std::vector<Layer*> block = model.unet().DownBlock(1);
  EXPECT_EQ(Names(block), (std::vector<std::string>{"conv2d", "batch_norm"}));
  // Down block 1's input: the first block's output shape [n, 8, 16, 16].
  const Tensor x = RandomTensor(Shape{4, 8, 16, 16}, 11);
  ActivationCache c0, c1;
  const Tensor conv = block[0]->Forward(Context{}, x, &c0);
  const Tensor y = block[1]->Forward(Context{}, conv, &c1);
  ASSERT_EQ(y.shape(), (Shape{4, 16, 8, 8}));
  bool negatives = false;
  for (int64_t ch = 0; ch < 16; ++ch) {
    double sum = 0, sq = 0, conv_sum = 0, conv_sq = 0;
    for (int64_t n = 0; n < 4; ++n) {
      for (int64_t p = 0; p < 64; ++p) {
        const double v = y.at((n * 16 + ch) * 64 + p), c = conv.at((n * 16 + ch) * 64 + p);
        negatives |= v < 0;
        const double pre = v < 0 ? v / 0.2 : v;
        sum += pre;
        sq += pre * pre;
        conv_sum += c;
        conv_sq += c * c;
      }
    }
    const double mean = sum / 256, var = sq / 256 - mean * mean;
    const double conv_var = conv_sq / 256 - (conv_sum / 256) * (conv_sum / 256);
    EXPECT_NEAR(mean, 0.0, 1e-4) << "channel " << ch;
    // BatchNorm (eps 1e-3) leaves variance var / (var + eps) of its input's.
    EXPECT_NEAR(var, conv_var / (conv_var + 1e-3), 1e-3) << "channel " << ch;
  }
  EXPECT_TRUE(negatives) << "LeakyReLU should pass scaled negatives";
}

// Decision: no norm in the first and in the innermost down block. With a BatchNorm over
// the 1x1 bottleneck a batch of one would normalise every channel to beta (our BatchNorm
// refuses a single value per channel outright), so a per-rank batch of 1 must train and
// the bottleneck convolution must receive a gradient.
TEST(Pix2pixTest, BottleneckHasNoNormAndBatchOneTrains) {
  Pix2pix model(Small());
  model.Initialize(InitScheme::kNormal002, 4);
  const UNet& unet = model.unet();
  EXPECT_EQ(Names(unet.DownBlock(0)), (std::vector<std::string>{"conv2d"}));
  EXPECT_EQ(Names(unet.DownBlock(unet.depth() - 1)), (std::vector<std::string>{"conv2d"}));
  for (int64_t i = 1; i + 1 < unet.depth(); ++i) EXPECT_EQ(unet.DownBlock(i).size(), 2u) << i;

  Rng rng(1);
  const GanInputs in = model.StepInputs(Rows(1, 32, 5), rng, 1, 0, 1, Device::kCpu);
  const GanStepResult r = model.ComputeGradients(Context{}, in, GanLossWeights{});
  EXPECT_TRUE(std::isfinite(r.g_loss) && std::isfinite(r.d_loss));
  const FlatParameters::Entry* bottleneck = nullptr;
  for (const auto& e : model.g_params().param_entries()) {
    if (e.name.find("down4.0.conv2d.weight") != std::string::npos) bottleneck = &e;
  }
  ASSERT_NE(bottleneck, nullptr);
  double norm = 0;
  for (int64_t i = 0; i < bottleneck->spec.shape.numel(); ++i) {
    norm += std::fabs(model.g_params().grads().at(bottleneck->offset + i));
  }
  EXPECT_GT(norm, 0.0) << "the bottleneck convolution gets no gradient at batch 1";
}

// Decision: up blocks ConvT -> norm -> ReLU -> Dropout(0.5) in the first three (ReLU
// before Dropout is the same function as after it), and the output is tanh.
TEST(Pix2pixTest, UpBlocksAreConvTNormReluWithDropoutInTheFirstThree) {
  Pix2pix model(Small(64));
  const UNet& unet = model.unet();
  ASSERT_EQ(unet.depth(), 6);
  for (int64_t j = 0; j + 1 < unet.depth(); ++j) {
    std::vector<std::string> want = {"conv_transpose2d", "batch_norm"};
    if (j < 3) want.push_back("dropout");
    EXPECT_EQ(Names(unet.UpBlock(j)), want) << "up block " << j;
  }
  Pix2pixConfig instance = Small(64, 8, NormKind::kInstance);
  Pix2pix model_in(instance);
  EXPECT_EQ(Names(model_in.unet().UpBlock(0)),
            (std::vector<std::string>{"conv_transpose2d", "instance_norm", "relu", "dropout"}));
  EXPECT_EQ(Names(model_in.unet().DownBlock(1)), (std::vector<std::string>{"conv2d", "instance_norm", "leaky_relu"}));

  // Outputs of an up block are >= 0 (ReLU last, dropout only zeroes and scales), and
  // about half of block 0's are dropped in training but none in inference.
  model.Initialize(InitScheme::kNormal002, 5);
  const std::vector<Layer*> up0 = unet.UpBlock(0);
  const Tensor x = RandomTensor(Shape{4, unet.down_channels(5), 1, 1}, 6);
  auto run = [&](const Context& ctx) {
    Tensor h = x;
    for (Layer* l : up0) {
      ActivationCache c;
      h = l->Forward(ctx, h, &c);
    }
    return h;
  };
  Context train;
  train.dropout_seed = 17;
  Context eval;
  eval.training = false;
  const Tensor yt = run(train), ye = run(eval);
  int64_t zeros_train = 0, zeros_eval = 0;
  for (int64_t i = 0; i < yt.numel(); ++i) {
    EXPECT_GE(yt.at(i), 0.0f);
    EXPECT_GE(ye.at(i), 0.0f);
    zeros_train += yt.at(i) == 0.0f;
    zeros_eval += ye.at(i) == 0.0f;
  }
  EXPECT_GT(zeros_train, zeros_eval + yt.numel() / 5) << "dropout 0.5 should zero about half on top of the ReLU's";
}

double Softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// Decision: D's loss is halved. And G's is BCE + l1_weight x L1. Recomputed here from the
// step's own logits and fake, in double.
TEST(Pix2pixTest, LossesAreHalvedBceForDAndBcePlusWeightedL1ForG) {
  Pix2pixConfig config = Small();
  config.l1_weight = 37.0f;
  Pix2pix model(config);
  model.Initialize(InitScheme::kNormal002, 6);
  Rng rng(1);
  const Tensor rows = Rows(3, 32, 7);
  const GanInputs in = model.StepInputs(rows, rng, 3, 0, 3, Device::kCpu);
  const GanStepResult r = model.ComputeGradients(Context{}, in, GanLossWeights{});
  double real = 0, fake = 0, fool = 0, l1 = 0;
  const int64_t m = r.real_logits.numel();
  for (int64_t i = 0; i < m; ++i) {
    real += Softplus(-r.real_logits.at(i)) / m;
    fake += Softplus(r.fake_logits.at(i)) / m;
    fool += Softplus(-r.fake_logits.at(i)) / m;
  }
  for (int64_t i = 0; i < r.fake.numel(); ++i) l1 += std::fabs(r.fake.at(i) - in.real.at(i)) / r.fake.numel();
  EXPECT_NEAR(r.d_loss, 0.5 * (real + fake), 1e-6);
  EXPECT_NEAR(r.g_loss, fool + 37.0 * l1, 1e-5);
  EXPECT_EQ(r.real_logits.shape(), (Shape{3, 1, 2, 2}));
}

// GanLossWeights: the gradients are of weights.d x d_loss and weights.g x g_loss (both of
// G's terms), the returned losses unweighted. Powers of two scale exactly.
TEST(Pix2pixTest, LossWeightsScaleBothNetworksGradients) {
  Pix2pix model(Small());
  model.Initialize(InitScheme::kNormal002, 8);
  Rng rng(1);
  const GanInputs in = model.StepInputs(Rows(2, 32, 9), rng, 2, 0, 2, Device::kCpu);
  Context ctx;
  ctx.dropout_seed = 5;
  const GanStepResult one = model.ComputeGradients(ctx, in, GanLossWeights{});
  const Tensor g1 = model.g_params().grads().Clone(), d1 = model.d_params().grads().Clone();
  const GanStepResult w = model.ComputeGradients(ctx, in, GanLossWeights{0.25f, 0.5f});
  EXPECT_EQ(w.d_loss, one.d_loss);
  EXPECT_EQ(w.g_loss, one.g_loss);
  for (int64_t i = 0; i < g1.numel(); ++i) ASSERT_FLOAT_EQ(model.g_params().grads().at(i), 0.5f * g1.at(i)) << i;
  for (int64_t i = 0; i < d1.numel(); ++i) ASSERT_FLOAT_EQ(model.d_params().grads().at(i), 0.25f * d1.at(i)) << i;
}

TEST(Pix2pixTest, StepInputsSplitConditionAndTargetAndDrawNothing) {
  const Pix2pix model(Small());
  EXPECT_EQ(model.SampleShape(), (Shape{7, 32, 32}));
  const Tensor rows = Rows(5, 32, 10);
  Rng rng(42);
  const uint64_t before = rng.state();
  const GanInputs in = model.StepInputs(rows.Slice(2, 5), rng, 5, 2, 5, Device::kCpu);
  EXPECT_EQ(rng.state(), before);
  ASSERT_EQ(in.generator_input.shape(), (Shape{3, 4, 32, 32}));
  ASSERT_EQ(in.real.shape(), (Shape{3, 3, 32, 32}));
  const int64_t plane = 32 * 32;
  for (int64_t n = 0; n < 3; ++n) {
    for (int64_t i = 0; i < 4 * plane; ++i) {
      ASSERT_EQ(in.generator_input.at(n * 4 * plane + i), rows.at((2 + n) * 7 * plane + i));
    }
    for (int64_t i = 0; i < 3 * plane; ++i) ASSERT_EQ(in.real.at(n * 3 * plane + i), rows.at((2 + n) * 7 * plane + 4 * plane + i));
  }
}

TEST(Pix2pixTest, SamplesComeFromDataRows) {
  const Pix2pix model(Small());
  EXPECT_TRUE(model.SamplesFromData());
  const Tensor rows = Rows(2, 32, 12);
  const Tensor inputs = model.SampleInputsFromRows(rows);
  ASSERT_EQ(inputs.shape(), (Shape{2, 4, 32, 32}));
  EXPECT_EQ(inputs.at(4 * 1024 + 5), rows.at(7 * 1024 + 5));
  Rng rng(1);
  EXPECT_DEATH(model.SampleInputs(rng, 4), "SampleInputsFromRows");
}

// Inference (rollout, tiles): BatchNorm on running statistics and dropout off, so a
// sample's prediction depends neither on its batch-mates nor on the dropout seed.
TEST(Pix2pixTest, InferenceIsPerSampleAndDeterministic) {
  for (NormKind norm : {NormKind::kBatch, NormKind::kInstance}) {
    Pix2pix model(Small(32, 8, norm));
    model.Initialize(InitScheme::kNormal002, 13);
    Rng rng(1);
    // A training step first, so the running statistics are not the initial 0 / 1.
    model.ComputeGradients(Context{}, model.StepInputs(Rows(4, 32, 14), rng, 4, 0, 4, Device::kCpu),
                           GanLossWeights{});
    const Tensor x = model.SampleInputsFromRows(Rows(3, 32, 15));
    Context eval;
    eval.training = false;
    eval.dropout_seed = 1;
    SequentialCache c1, c2, c3;
    const Tensor all = model.generator().Forward(eval, x, &c1);
    eval.dropout_seed = 2;
    const Tensor again = model.generator().Forward(eval, x, &c2);
    const Tensor one = model.generator().Forward(eval, x.Slice(1, 2), &c3);
    const int64_t per = 3 * 32 * 32;
    for (int64_t i = 0; i < all.numel(); ++i) ASSERT_EQ(again.at(i), all.at(i)) << "dropout seed changed inference";
    // Alone or with batch-mates: the same up to the round-off of the convolutions, which
    // lower a batch in chunks whose size depends on the batch (a dependence on a
    // batch-mate's values would move outputs by orders of magnitude more).
    for (int64_t i = 0; i < per; ++i) ASSERT_NEAR(one.at(i), all.at(per + i), 1e-6) << "norm " << static_cast<int>(norm);
  }
}

// Central differences of L = sum w * y against the analytic gradients of the input and of
// every parameter TENSOR (probed separately, so small ones such as BatchNorm's are not
// skipped), read from the flat gradient buffer the network is bound to.
void CheckNetworkGradients(const std::function<Tensor(const Context&, const Tensor&, ActivationCache*)>& forward,
                           const std::function<Tensor(const Context&, const Tensor&, const ActivationCache&)>& backward,
                           FlatParameters& params, const Shape& in_shape, const Shape& out_shape) {
  const Tensor x = RandomTensor(in_shape, 21);
  const Tensor w = RandomTensor(out_shape, 22);
  Context ctx;
  ctx.dropout_seed = 77;  // the same masks in every forward
  auto loss = [&]() {
    ActivationCache cache;
    const Tensor y = forward(ctx, x, &cache);
    double s = 0;
    for (int64_t i = 0; i < y.numel(); ++i) s += static_cast<double>(w.at(i)) * y.at(i);
    return s;
  };
  params.ZeroGrads();
  ActivationCache cache;
  ASSERT_EQ(forward(ctx, x, &cache).shape(), out_shape);
  const Tensor dx = backward(ctx, w, cache);
  ASSERT_EQ(dx.shape(), in_shape);
  // Calibration (Glorot weights, batch 2, 32 px, ngf 4): central differences with a step
  // of 1e-3 come within 9% of the analytic gradients for every probe, the worst on the
  // first convolution's weights, whose perturbation runs through the whole curved
  // network (smaller steps drown in fp32 forward noise: BatchNorm over 8 values).
  // Dropping the skip connections' gradient, on purpose, moves 66 probes by 25% to 185%.
  GradCheckOptions options;
  options.step = 1e-3;
  options.tolerance = 0.15;
  options.floor = 0.05;  // input gradients of ~1e-2 carry ~3e-3 of fp32 forward noise at this step
  options.max_checks = 24;
  CheckGradientOf(loss, x, dx, "input", options);
  options.max_checks = 6;
  for (const FlatParameters::Entry& e : params.param_entries()) {
    const Shape s{e.spec.shape.numel()};
    CheckGradientOf(loss, params.params().ViewAt(e.offset, s), params.grads().ViewAt(e.offset, s), e.name, options);
  }
}

void CheckUNetGradients(NormKind norm) {
  Pix2pixConfig config = Small(32, 4, norm);
  // Dropout off: its masks are fixed per seed, but doubling the kept units makes the
  // network far more curved at this step; Dropout has its own gradient test.
  config.dropout = 0;
  UNet unet(config, 4, 3);
  Layer* layers[] = {&unet};
  FlatParameters params(layers);
  Rng rng(3);
  params.Initialize(InitScheme::kGlorotUniform, rng);  // larger than N(0, 0.02): gradients well above the floor
  CheckNetworkGradients(
      [&](const Context& ctx, const Tensor& x, ActivationCache* c) { return unet.Forward(ctx, x, c); },
      [&](const Context& ctx, const Tensor& dy, const ActivationCache& c) { return unet.Backward(ctx, dy, c, true); },
      params, Shape{2, 4, 32, 32}, Shape{2, 3, 32, 32});
  testing::CheckParamGradsAccumulate(unet, params, Shape{2, 4, 32, 32});
  testing::CheckParamGradsFlagHonoured(unet, params, Shape{2, 4, 32, 32});
}

TEST(Pix2pixGradientTest, WholeUNetWithBatchNorm) { CheckUNetGradients(NormKind::kBatch); }
TEST(Pix2pixGradientTest, WholeUNetWithInstanceNorm) { CheckUNetGradients(NormKind::kInstance); }

TEST(Pix2pixGradientTest, WholePatchGan) {
  for (NormKind norm : {NormKind::kBatch, NormKind::kInstance}) {
    Sequential d = MakePix2pixDiscriminator(Small(32, 4, norm));
    const std::vector<Layer*> layers = d.layers();
    FlatParameters params(layers);
    Rng rng(4);
    params.Initialize(InitScheme::kGlorotUniform, rng);
    CheckNetworkGradients(
        [&](const Context& ctx, const Tensor& x, ActivationCache* c) {
          c->children.resize(1);
          SequentialCache sc;
          const Tensor y = d.Forward(ctx, x, &sc);
          c->children[0].children = std::move(sc.per_layer);
          return y;
        },
        [&](const Context& ctx, const Tensor& dy, const ActivationCache& c) {
          return d.Backward(ctx, dy, SequentialCache{c.children[0].children}, true);
        },
        params, Shape{3, 7, 32, 32}, Shape{3, 1, 2, 2});
  }
}

}  // namespace
}  // namespace gantry
