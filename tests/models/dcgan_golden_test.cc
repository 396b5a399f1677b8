// One whole DCGAN training step against the PyTorch reference model of
// bench/torch/dcgan_model.py (tests/golden/dcgan_step/, written by
// scripts/make_goldens.py; its README.md describes every file).
//
// Both sides start from the same parameters, rebuilt here from the integer-hash recipe
// of the script (torch's RNG cannot be reproduced), with dropout off (its masks come
// from different RNGs) and batch 8. Compared: fake = G(z), the real and fake logits, both
// losses, the gradients of G and D at a subsample of flat indices (every 97th plus all
// biases and BatchNorm gammas/betas, so every parameter tensor is checked), G's
// BatchNorm running statistics after the step, and the parameters after one Adam step.
//
// Tolerances. The goldens are float64 results rounded once to float32, so the
// differences are the C++ side's fp32 rounding. As a yardstick the script runs the same
// step in float32 torch: its largest deviation from the goldens is 8.8e-7 for fake
// (values up to 0.99), 5.4e-7 for the logits (up to 0.35), 9e-8 for the losses, and at
// most 2e-6 of each gradient tensor's largest |value|. The C++ sums in other orders
// (per-sample im2col GEMMs, its own BatchNorm reductions), so we allow about ten times
// that: 1e-5 absolute on fake, 5e-6 on the logits, 1e-5 on the losses, and 2e-5 of each
// gradient tensor's largest |value| (plus 2e-5 relative). A real defect (a wrong
// slope, eps, layout, transposed kernel, missing term) moves values by far more than
// 1e-3 of their scale. Parameters after Adam: see ExpectAdamStepClose.
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/golden.h"
#include "tests/testing/golden_step.h"
#include "worker/models/dcgan.h"
#include "worker/models/gan_step.h"
#include "worker/optim/adam.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using testing::ExpectAllClose;
using testing::ExpectLayoutMatches;
using testing::FillRecipe;
using testing::Gather;
using testing::GoldenLayout;
using testing::LoadGolden;
using testing::LoadGoldenIndices;
using testing::LoadGoldenLayout;
using testing::MaxAbs;
using testing::RecipeValue;
using testing::TensorOf;

constexpr char kCase[] = "dcgan_step";
constexpr uint64_t kGeneratorSeed = 1;      // G_SEED in make_goldens.py
constexpr uint64_t kDiscriminatorSeed = 2;  // D_SEED
constexpr double kFakeAtol = 1e-5;
constexpr double kLogitAtol = 5e-6;
constexpr double kLossAtol = 1e-5;
constexpr double kGradRel = 2e-5;
// Running statistics: mean = 0.01 * batch mean (~1e-3), var = 0.99 + 0.01 * batch var
// (~1); 3e-7 is 2.5 fp32 ulps at 1. Biased instead of unbiased variance (8/7 for batch
// 8) or a swapped momentum would move them by >= 1e-3.
constexpr double kBufferAtol = 3e-7;
// Adam as the script: torch.optim.Adam(lr=1e-4, betas=(0.5, 0.999), eps=1e-7). After
// one step the update is lr * g / (|g| + eps) whatever the betas, so this pins lr, eps
// and the bias correction, not the betas (tests/optim covers those).
constexpr AdamConfig kAdam{.lr = 1e-4f, .beta1 = 0.5f, .beta2 = 0.999f, .eps = 1e-7f};
// Rounding of p - update to fp32 (the golden rounds once, the C++ computes the update in
// fp32 and rounds again): 2 ulps of |p| plus a floor far below any update (~1e-4).
constexpr double kParamRtol = 2.5e-7;
constexpr double kParamAtol = 1e-9;

GoldenLayout LoadLayout(const std::string& file) { return LoadGoldenLayout(kCase, file); }
std::vector<int64_t> LoadIndices(const std::string& file) { return LoadGoldenIndices(kCase, file); }

std::vector<double> ExpectGradsClose(const Tensor& actual, const Tensor& expected, const std::vector<int64_t>& idx,
                                     const GoldenLayout& layout, const FlatParameters& params, const std::string& net) {
  return testing::ExpectGradsClose(actual, expected, idx, layout, params, kGradRel, net);
}

// Parameters after one Adam step. The first update is u(g) = lr * g / (|g| + eps), so a
// gradient off by up to delta moves it by up to delta * max|u'| over [g - delta,
// g + delta], with |u'(g)| = lr * eps / (|g| + eps)^2 largest nearest 0 (and |u| never
// exceeds lr, so 2 lr caps it). Gradients far above eps (most) leave only rounding;
// the few near eps are genuinely ill-conditioned and get what their allowance implies.
// `grad_allowance` empty: the gradients were exact (the golden ones).
void ExpectAdamStepClose(const Tensor& actual, const Tensor& expected, const Tensor& grads,
                         const std::vector<double>& grad_allowance, const std::string& what) {
  ASSERT_EQ(actual.numel(), expected.numel()) << what;
  const double lr = kAdam.lr, eps = kAdam.eps;
  int64_t bad = 0, worst = -1;
  double worst_ratio = 0;
  for (int64_t j = 0; j < expected.numel(); ++j) {
    const double e = expected.at(j);
    double allowed = kParamAtol + kParamRtol * std::fabs(e);
    if (!grad_allowance.empty()) {
      const double delta = grad_allowance[static_cast<size_t>(j)];
      const double nearest = std::max(std::fabs(static_cast<double>(grads.at(j))) - delta, 0.0);
      allowed += std::min(2 * lr, delta * lr * eps / ((nearest + eps) * (nearest + eps)));
    }
    const double err = std::fabs(static_cast<double>(actual.at(j)) - e);
    const double ratio = std::isnan(err) ? INFINITY : err / allowed;
    if (ratio > 1) ++bad;
    if (worst < 0 || ratio > worst_ratio) {
      worst = j;
      worst_ratio = ratio;
    }
  }
  EXPECT_EQ(bad, 0) << std::setprecision(9) << what << ": worst [" << worst << "] actual " << actual.at(worst)
                    << " expected " << expected.at(worst) << " (gradient " << grads.at(worst) << ", "
                    << worst_ratio << "x the allowance)";
}

TEST(DcganGoldenTest, ParameterLayoutMatchesTorch) {
  DcganConfig config;
  config.dropout = 0.0f;
  Dcgan model(config);
  ExpectLayoutMatches(model.g_params(), LoadLayout("g_layout.npy"), "G");
  ExpectLayoutMatches(model.d_params(), LoadLayout("d_layout.npy"), "D");
  EXPECT_EQ(model.g_params().num_params(), 2'305'472);
  EXPECT_EQ(model.d_params().num_params(), 212'865);
  EXPECT_EQ(model.g_params().buffers().numel(), LoadGolden(kCase, "g_buffers.npy").numel());
  EXPECT_EQ(model.d_params().buffers().numel(), 0) << "D has no BatchNorm";
}

// Adam alone, on the golden gradients at the sampled indices (it is element-wise, so the
// subsample is a valid input): only rounding separates it from torch.
TEST(DcganGoldenTest, AdamStepOnGoldenGradientsMatchesTorch) {
  for (const char* net : {"g", "d"}) {
    const GoldenLayout layout = LoadLayout(std::string(net) + "_layout.npy");
    const std::vector<int64_t> idx = LoadIndices(std::string(net) + "_indices.npy");
    const uint64_t seed = net[0] == 'g' ? kGeneratorSeed : kDiscriminatorSeed;
    Tensor params = Tensor::Zeros(Shape{static_cast<int64_t>(idx.size())});
    for (size_t j = 0; j < idx.size(); ++j) {
      params.data()[j] = RecipeValue(seed, idx[j], layout.gamma[TensorOf(layout, idx[j])]);
    }
    const Tensor grads = LoadGolden(kCase, std::string(net) + "_grads.npy");
    ASSERT_EQ(grads.numel(), params.numel());
    Adam adam(kAdam, params.numel());
    adam.Step(CpuBackend(), params, grads);
    ExpectAdamStepClose(params, LoadGolden(kCase, std::string(net) + "_params_after.npy"), grads, {},
                        std::string(net) + " params after Adam on the golden gradients");
  }
}

// One step on `backend` (fp32) against the goldens.
void ExpectTrainingStepMatchesTorch(Backend& backend) {
  DcganConfig config;
  config.dropout = 0.0f;  // the goldens were made with Dropout(p=0)
  Dcgan model(config);
  const GoldenLayout g_layout = LoadLayout("g_layout.npy");
  const GoldenLayout d_layout = LoadLayout("d_layout.npy");
  ExpectLayoutMatches(model.g_params(), g_layout, "G");
  ExpectLayoutMatches(model.d_params(), d_layout, "D");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "parameter layouts differ; nothing below would be meaningful";

  FillRecipe(model.g_params().params(), g_layout, kGeneratorSeed);
  FillRecipe(model.d_params().params(), d_layout, kDiscriminatorSeed);
  const Tensor g_buffers = LoadGolden(kCase, "g_buffers.npy");
  ASSERT_EQ(model.g_params().buffers().numel(), g_buffers.numel());
  model.g_params().buffers().CopyFrom(g_buffers);

  Context ctx;
  ctx.backend = &backend;
  ctx.training = true;
  ctx.dropout_seed = 12345;  // irrelevant at rate 0
  const Tensor z = LoadGolden(kCase, "z.npy");
  const Tensor real = LoadGolden(kCase, "real.npy");
  const GanStepResult r = ComputeGanGradients(ctx, model, real, z);

  ExpectAllClose(r.fake, LoadGolden(kCase, "fake.npy"), kFakeAtol, 0, "fake = G(z)");
  ExpectAllClose(r.real_logits, LoadGolden(kCase, "real_logits.npy"), kLogitAtol, 0, "D(real)");
  ExpectAllClose(r.fake_logits, LoadGolden(kCase, "fake_logits.npy"), kLogitAtol, 0, "D(fake)");
  ExpectAllClose(Tensor::FromVector(Shape{2}, {static_cast<float>(r.d_loss), static_cast<float>(r.g_loss)}),
                 LoadGolden(kCase, "losses.npy"), kLossAtol, 0, "[d_loss, g_loss]");

  const std::vector<int64_t> g_idx = LoadIndices("g_indices.npy");
  const std::vector<int64_t> d_idx = LoadIndices("d_indices.npy");
  const Tensor g_grads = LoadGolden(kCase, "g_grads.npy");
  const Tensor d_grads = LoadGolden(kCase, "d_grads.npy");
  const std::vector<double> g_allow =
      ExpectGradsClose(Gather(model.g_params().grads(), g_idx), g_grads, g_idx, g_layout, model.g_params(), "G");
  const std::vector<double> d_allow =
      ExpectGradsClose(Gather(model.d_params().grads(), d_idx), d_grads, d_idx, d_layout, model.d_params(), "D");

  ExpectAllClose(model.g_params().buffers(), LoadGolden(kCase, "g_buffers_after.npy"), kBufferAtol, 0,
                 "G BatchNorm running_mean/running_var after the step");

  Adam g_adam(kAdam, model.g_params().num_params());
  Adam d_adam(kAdam, model.d_params().num_params());
  g_adam.Step(*ctx.backend, model.g_params().params(), model.g_params().grads());
  d_adam.Step(*ctx.backend, model.d_params().params(), model.d_params().grads());
  ExpectAdamStepClose(Gather(model.g_params().params(), g_idx), LoadGolden(kCase, "g_params_after.npy"), g_grads,
                      g_allow, "G params after Adam");
  ExpectAdamStepClose(Gather(model.d_params().params(), d_idx), LoadGolden(kCase, "d_params_after.npy"), d_grads,
                      d_allow, "D params after Adam");
}

TEST(DcganGoldenTest, OneTrainingStepMatchesTorch) { ExpectTrainingStepMatchesTorch(CpuBackend()); }

// The same step on the oneDNN kernels, to the same tolerances.
TEST(DcganGoldenTest, OneTrainingStepOnOnednnMatchesTorch) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  ExpectTrainingStepMatchesTorch(*onednn);
}

}  // namespace
}  // namespace gantry
