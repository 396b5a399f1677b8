// The image DCGAN (worker/models/image_dcgan.h) against its PyTorch twin,
// bench/torch/image_dcgan_model.py (examples/dcgan's network): one whole training step at
// 32 px, 3 channels, ngf = ndf = 8, batch 4 (tests/golden/image_dcgan_step/, written by
// scripts/make_goldens.py; its README.md describes every file), the parameter layout and
// counts at every size, and the state_dict names.
//
// Both sides start from the integer-hash recipe of the script (as dcgan_golden_test.cc).
// Compared: fake = G(z), both logits, both losses, both gradients at a subsample of flat
// indices (every 97th plus all BatchNorm gammas and betas), and both networks'
// BatchNorm running statistics after the step (D's after its real and its fake pass).
//
// Tolerances. The goldens are float64 results rounded once to float32. The script's
// float32 torch run of the same step deviates from them by at most 1.7e-7 (fake, values
// up to 0.63), 8.8e-7 (logits, up to 0.71), 8.9e-7 (gradients, up to 1.19). The C++ sums
// in other orders, so about ten times that is allowed: 1e-5 on fake and the losses, 1e-5
// on the logits, 2e-5 of each gradient tensor's largest |value| (plus 2e-5 relative),
// 3e-7 on running statistics. A wrong kernel size, padding, slope, eps, momentum or
// layout moves values by far more than 1e-3 of their scale.
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/golden.h"
#include "tests/testing/golden_step.h"
#include "worker/models/gan_step.h"
#include "worker/models/image_dcgan.h"

namespace gantry {
namespace image_dcgan_golden {  // named: the unity build shares a file with the other goldens
namespace {

using testing::ExpectAllClose;
using testing::ExpectLayoutMatches;
using testing::FillRecipe;
using testing::Gather;
using testing::GoldenLayout;
using testing::LoadGolden;

constexpr char kCase[] = "image_dcgan_step";
constexpr uint64_t kGeneratorSeed = 5;      // IMG_G_SEED in make_goldens.py
constexpr uint64_t kDiscriminatorSeed = 6;  // IMG_D_SEED
constexpr double kFakeAtol = 1e-5;
constexpr double kLogitAtol = 1e-5;
constexpr double kLossAtol = 1e-5;
constexpr double kGradRel = 2e-5;
constexpr double kBufferAtol = 3e-7;

ImageDcganConfig GoldenConfig() {
  ImageDcganConfig c;
  c.image_size = 32;
  c.channels = 3;
  c.ngf = c.ndf = 8;
  return c;
}

TEST(ImageDcganGoldenTest, ParameterLayoutMatchesTorch) {
  ImageDcgan model(GoldenConfig());
  ExpectLayoutMatches(model.g_params(), testing::LoadGoldenLayout(kCase, "g_layout.npy"), "G");
  ExpectLayoutMatches(model.d_params(), testing::LoadGoldenLayout(kCase, "d_layout.npy"), "D");
}

// examples/dcgan's 64-px network and its one-block-shallower and -deeper siblings:
// parameter counts as torch counts them (make_goldens.py prints the 64-px ones; the
// others from image_dcgan_model.py's __main__).
TEST(ImageDcganGoldenTest, ParameterCountsMatchExamplesDcgan) {
  struct Case {
    int64_t size, channels, g, d;
  };
  for (const Case& c : {Case{64, 3, 3'576'704, 2'765'568}, Case{32, 3, 1'068'928, 663'296},
                        Case{128, 3, 7'772'032, 6'960'896}, Case{64, 1, 3'574'656, 2'763'520}}) {
    ImageDcganConfig config;
    config.image_size = c.size;
    config.channels = c.channels;
    ImageDcgan model(config);
    EXPECT_EQ(model.g_params().num_params(), c.g) << c.size << " px, " << c.channels << " channels";
    EXPECT_EQ(model.d_params().num_params(), c.d) << c.size << " px, " << c.channels << " channels";
    EXPECT_EQ(model.SampleShape(), (Shape{c.channels, c.size, c.size}));
  }
}

// examples/dcgan's nn.Sequential indices: G main.0 ConvT, main.1 BN, main.3, main.4, ...,
// main.12 the output ConvT; D main.0 Conv, main.2 Conv, main.3 BN, ..., main.11 the logit.
TEST(ImageDcganGoldenTest, StateDictNamesAreExamplesDcgans) {
  ImageDcganConfig config;  // 64 px
  ImageDcgan model(config);
  const TorchNames g = model.TorchStateDictNames(GanNetwork::kGenerator);
  EXPECT_EQ(g.params, (std::vector<std::string>{"main.0.weight", "main.1.weight", "main.1.bias", "main.3.weight",
                                                "main.4.weight", "main.4.bias", "main.6.weight", "main.7.weight",
                                                "main.7.bias", "main.9.weight", "main.10.weight", "main.10.bias",
                                                "main.12.weight"}));
  EXPECT_EQ(g.buffers.front(), "main.1.running_mean");
  EXPECT_EQ(g.buffers.back(), "main.10.running_var");
  EXPECT_EQ(static_cast<int64_t>(g.params.size()), model.g_params().param_entries().size());
  const TorchNames d = model.TorchStateDictNames(GanNetwork::kDiscriminator);
  EXPECT_EQ(d.params, (std::vector<std::string>{"main.0.weight", "main.2.weight", "main.3.weight", "main.3.bias",
                                                "main.5.weight", "main.6.weight", "main.6.bias", "main.8.weight",
                                                "main.9.weight", "main.9.bias", "main.11.weight"}));
  EXPECT_EQ(d.buffers.size(), 6u);
  EXPECT_EQ(static_cast<int64_t>(d.params.size()), model.d_params().param_entries().size());
}

void ExpectTrainingStepMatchesTorch(Backend& backend) {
  ImageDcgan model(GoldenConfig());
  const GoldenLayout g_layout = testing::LoadGoldenLayout(kCase, "g_layout.npy");
  const GoldenLayout d_layout = testing::LoadGoldenLayout(kCase, "d_layout.npy");
  ExpectLayoutMatches(model.g_params(), g_layout, "G");
  ExpectLayoutMatches(model.d_params(), d_layout, "D");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "parameter layouts differ; nothing below would be meaningful";
  FillRecipe(model.g_params().params(), g_layout, kGeneratorSeed);
  FillRecipe(model.d_params().params(), d_layout, kDiscriminatorSeed);
  // Running statistics start as torch's: mean 0, variance 1.
  for (FlatParameters* p : {&model.g_params(), &model.d_params()}) {
    Tensor host = p->buffers().On(Device::kCpu);
    for (const auto& e : p->buffer_entries()) {
      host.ViewAt(e.offset, e.spec.shape).Fill(e.spec.name == "running_var" ? 1.0f : 0.0f);
    }
    p->buffers().CopyFrom(host);
  }

  Context ctx;
  ctx.backend = &backend;
  ctx.training = true;
  const GanStepResult r =
      ComputeGanGradients(ctx, model, LoadGolden(kCase, "real.npy"), LoadGolden(kCase, "z.npy"));
  ExpectAllClose(r.fake, LoadGolden(kCase, "fake.npy"), kFakeAtol, 0, "fake = G(z)");
  ExpectAllClose(r.real_logits, LoadGolden(kCase, "real_logits.npy"), kLogitAtol, 0, "D(real)");
  ExpectAllClose(r.fake_logits, LoadGolden(kCase, "fake_logits.npy"), kLogitAtol, 0, "D(fake)");
  ExpectAllClose(Tensor::FromVector(Shape{2}, {static_cast<float>(r.d_loss), static_cast<float>(r.g_loss)}),
                 LoadGolden(kCase, "losses.npy"), kLossAtol, 0, "[d_loss, g_loss]");
  const std::vector<int64_t> g_idx = testing::LoadGoldenIndices(kCase, "g_indices.npy");
  const std::vector<int64_t> d_idx = testing::LoadGoldenIndices(kCase, "d_indices.npy");
  testing::ExpectGradsClose(Gather(model.g_params().grads(), g_idx), LoadGolden(kCase, "g_grads.npy"), g_idx,
                            g_layout, model.g_params(), kGradRel, "G");
  testing::ExpectGradsClose(Gather(model.d_params().grads(), d_idx), LoadGolden(kCase, "d_grads.npy"), d_idx,
                            d_layout, model.d_params(), kGradRel, "D");
  ExpectAllClose(model.g_params().buffers(), LoadGolden(kCase, "g_buffers_after.npy"), kBufferAtol, 0,
                 "G's BatchNorm running statistics after the step");
  ExpectAllClose(model.d_params().buffers(), LoadGolden(kCase, "d_buffers_after.npy"), kBufferAtol, 0,
                 "D's BatchNorm running statistics after its real and fake passes");
}

TEST(ImageDcganGoldenTest, OneTrainingStepMatchesTorch) { ExpectTrainingStepMatchesTorch(CpuBackend()); }

TEST(ImageDcganGoldenTest, OneTrainingStepOnOnednnMatchesTorch) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  ExpectTrainingStepMatchesTorch(*onednn);
}

}  // namespace
}  // namespace image_dcgan_golden
}  // namespace gantry
