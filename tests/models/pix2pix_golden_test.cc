// One whole Pix2Pix step (32 px, ngf = ndf = 8, batch 4, dropout off) against the
// PyTorch model of scripts/make_goldens.py (tests/golden/pix2pix_step*/; the README
// there describes the files), in fp32 and in the project's bf16 arithmetic.
//
// Both sides start from the integer-hash parameter recipe (testing::FillRecipe), feed the
// same rows and compare: fake = G(x), D's logits on the real and the fake pairs, both
// losses (D's halved), the gradients of G and D at a subsample of flat indices (every
// 97th plus every non-weight tensor), and both networks' BatchNorm running statistics
// after the step. The torch model is written from the description in pix2pix.h, so this
// pins the architecture, the skip order, the halved D loss and the L1 weight as well.
//
// Tolerances. fp32: the goldens are float64 results rounded once; as a yardstick the
// script's float32 torch run deviates by at most 5.4e-7 on fake, 9.7e-7 on the logits and
// 3.3e-6 of a gradient tensor's largest |value|; the C++ sums in other orders, so we
// allow about ten times that.
//
// bf16 (pix2pix_step_bf16): every convolution product takes bf16-rounded operands on both
// sides. An fp32 sum that lands on the other side of a bf16 rounding boundary than the
// float64 one flips that operand by 2^-8 of its value; in G such flips are amplified by
// the BatchNorms over a few values near the bottleneck (2x2 maps, batch 4), so G's
// output and everything downstream of it (D's fake logits, both gradients) end up
// about as far from the bf16 golden (RMS 4.0e-4 on fake) as bf16 is from fp32 (9e-4).
// D's forward on the real pairs has no such amplification and matches to 1.8e-7. So the
// bf16 test pins D(x, y) element by element at the fp32 tolerance (a missing or extra
// rounding of any operand moves it by ~6e-3), and checks the rest by RMS: within 2.5x of
// what the C++ showed, and nearer the bf16 goldens than the fp32 ones (the C++ bf16
// step's RMS distance to the bf16 goldens is 0.45x (fake), 0.44x (G gradients), 0.28x
// (D gradients) of its distance to the fp32 goldens).
#include <algorithm>
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/golden.h"
#include "tests/testing/golden_step.h"
#include "worker/models/pix2pix.h"

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

constexpr uint64_t kPix2PixGeneratorSeed = 3;      // P2P_G_SEED in make_goldens.py
constexpr uint64_t kPix2PixDiscriminatorSeed = 4;  // P2P_D_SEED

struct Tolerances {
  double fake, logits, losses, grad_rel, buffers;
};
constexpr Tolerances kFp32{1e-5, 1e-5, 1e-5, 3e-5, 3e-7};

Pix2pixConfig GoldenConfig() {
  Pix2pixConfig c;
  c.image_size = 32;
  c.ngf = 8;
  c.ndf = 8;
  c.dropout = 0.0f;  // the goldens use Dropout(0): the C++ masks are not torch's
  return c;
}

struct StepOutcome {
  GanStepResult result;
  Tensor g_grads, d_grads;
};

// One step of the recipe-initialised model on the golden rows; gradients gathered at the
// golden indices. Adds failures if the parameter layouts differ from torch's.
StepOutcome RunGoldenStep(const std::string& kase, Backend& backend, MathPrecision precision, Pix2pix& model) {
  const GoldenLayout g_layout = LoadGoldenLayout(kase, "g_layout.npy");
  const GoldenLayout d_layout = LoadGoldenLayout(kase, "d_layout.npy");
  ExpectLayoutMatches(model.g_params(), g_layout, "G");
  ExpectLayoutMatches(model.d_params(), d_layout, "D");
  CHECK(!::testing::Test::HasFailure()) << "parameter layouts differ from torch; nothing else would be meaningful";
  FillRecipe(model.g_params().params(), g_layout, kPix2PixGeneratorSeed);
  FillRecipe(model.d_params().params(), d_layout, kPix2PixDiscriminatorSeed);
  model.g_params().buffers().CopyFrom(LoadGolden(kase, "g_buffers.npy"));
  model.d_params().buffers().CopyFrom(LoadGolden(kase, "d_buffers.npy"));

  Context ctx;
  ctx.backend = &backend;
  ctx.precision = precision;
  ctx.dropout_seed = 99;  // irrelevant at rate 0
  const Tensor rows = LoadGolden(kase, "rows.npy");
  Rng unused(1);
  const GanInputs in = model.StepInputs(rows, unused, rows.dim(0), 0, rows.dim(0), Device::kCpu);
  StepOutcome out;
  out.result = model.ComputeGradients(ctx, in, GanLossWeights{});
  out.g_grads = Gather(model.g_params().grads(), LoadGoldenIndices(kase, "g_indices.npy"));
  out.d_grads = Gather(model.d_params().grads(), LoadGoldenIndices(kase, "d_indices.npy"));
  return out;
}

void ExpectStepMatchesTorch(const std::string& kase, Backend& backend, MathPrecision precision, const Tolerances& tol) {
  Pix2pix model(GoldenConfig());
  const StepOutcome s = RunGoldenStep(kase, backend, precision, model);
  const GanStepResult& r = s.result;
  ExpectAllClose(r.fake, LoadGolden(kase, "fake.npy"), tol.fake, 0, kase + " fake = G(x)");
  ExpectAllClose(r.real_logits, LoadGolden(kase, "real_logits.npy"), tol.logits, 0, kase + " D(x, y)");
  ExpectAllClose(r.fake_logits, LoadGolden(kase, "fake_logits.npy"), tol.logits, 0, kase + " D(x, G(x))");
  const Tensor losses = LoadGolden(kase, "losses.npy");  // d_loss, g_loss, L1 term
  ExpectAllClose(Tensor::FromVector(Shape{2}, {static_cast<float>(r.d_loss), static_cast<float>(r.g_loss)}),
                 Tensor::FromVector(Shape{2}, {losses.at(0), losses.at(1)}), tol.losses, tol.losses,
                 kase + " [d_loss, g_loss]");
  testing::ExpectGradsClose(s.g_grads, LoadGolden(kase, "g_grads.npy"), LoadGoldenIndices(kase, "g_indices.npy"),
                            LoadGoldenLayout(kase, "g_layout.npy"), model.g_params(), tol.grad_rel, kase + " G");
  testing::ExpectGradsClose(s.d_grads, LoadGolden(kase, "d_grads.npy"), LoadGoldenIndices(kase, "d_indices.npy"),
                            LoadGoldenLayout(kase, "d_layout.npy"), model.d_params(), tol.grad_rel, kase + " D");
  ExpectAllClose(model.g_params().buffers(), LoadGolden(kase, "g_buffers_after.npy"), tol.buffers, 0,
                 kase + " G running statistics after the step");
  ExpectAllClose(model.d_params().buffers(), LoadGolden(kase, "d_buffers_after.npy"), tol.buffers, 0,
                 kase + " D running statistics after the step (two forwards: real, then fake)");
}

TEST(Pix2pixGoldenTest, LayoutAndShapesMatchTorch) {
  Pix2pix model(GoldenConfig());
  ExpectLayoutMatches(model.g_params(), LoadGoldenLayout("pix2pix_step", "g_layout.npy"), "G");
  ExpectLayoutMatches(model.d_params(), LoadGoldenLayout("pix2pix_step", "d_layout.npy"), "D");
  EXPECT_EQ(model.g_params().buffers().numel(), LoadGolden("pix2pix_step", "g_buffers.npy").numel());
  EXPECT_EQ(model.d_params().buffers().numel(), LoadGolden("pix2pix_step", "d_buffers.npy").numel());
  EXPECT_EQ(model.discriminator().OutputShape(Shape{4, 7, 32, 32}),
            LoadGolden("pix2pix_step", "real_logits.npy").shape());
}

TEST(Pix2pixGoldenTest, Fp32StepMatchesTorch) {
  ExpectStepMatchesTorch("pix2pix_step", CpuBackend(), MathPrecision::kFp32, kFp32);
}

TEST(Pix2pixGoldenTest, Fp32StepOnOnednnMatchesTorch) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  ExpectStepMatchesTorch("pix2pix_step", *onednn, MathPrecision::kFp32, kFp32);
}

double Rms(const Tensor& a, const Tensor& b) {
  CHECK_EQ(a.numel(), b.numel());
  double s = 0;
  for (int64_t i = 0; i < a.numel(); ++i) s += std::pow(static_cast<double>(a.at(i)) - b.at(i), 2);
  return std::sqrt(s / static_cast<double>(a.numel()));
}

void ExpectBf16StepMatchesTorch(Backend& backend) {
  const std::string bf = "pix2pix_step_bf16", fp = "pix2pix_step";
  Pix2pix model(GoldenConfig());
  const StepOutcome s = RunGoldenStep(bf, backend, MathPrecision::kBf16, model);
  ExpectAllClose(s.result.real_logits, LoadGolden(bf, "real_logits.npy"), kFp32.logits, 0, "bf16 D(x, y)");
  const Tensor losses = LoadGolden(bf, "losses.npy");
  EXPECT_NEAR(s.result.d_loss, losses.at(0), 5e-3);
  EXPECT_NEAR(s.result.g_loss, losses.at(1), 5e-3 * losses.at(1));
  struct Check {
    const char* file;
    Tensor actual;
    double rms_allowed;
    double nearer;  // RMS to the bf16 golden at most this times the RMS to the fp32 one
  };
  const Check checks[] = {{"fake.npy", s.result.fake, 1e-3, 0.6},
                          {"fake_logits.npy", s.result.fake_logits, 9e-3, 0},
                          {"g_grads.npy", s.g_grads, 2.8e-3, 0.6},
                          {"d_grads.npy", s.d_grads, 7e-4, 0.6}};
  for (const Check& c : checks) {
    const double to_bf16 = Rms(c.actual, LoadGolden(bf, c.file));
    EXPECT_LE(to_bf16, c.rms_allowed) << c.file;
    if (c.nearer > 0) {
      const double to_fp32 = Rms(c.actual, LoadGolden(fp, c.file));
      EXPECT_LE(to_bf16, c.nearer * to_fp32) << c.file << ": the bf16 step is not nearer the bf16 goldens";
    }
  }
}

TEST(Pix2pixGoldenTest, Bf16StepMatchesTorchBf16Arithmetic) { ExpectBf16StepMatchesTorch(CpuBackend()); }

// oneDNN's bf16 kernels to the same bounds.
TEST(Pix2pixGoldenTest, Bf16StepOnOnednnMatchesTorchBf16Arithmetic) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  ExpectBf16StepMatchesTorch(*onednn);
}

// The bf16 goldens really are another computation: an fp32 step is far outside the
// element-wise tolerance on D(x, y) that the bf16 step meets.
TEST(Pix2pixGoldenTest, Fp32StepIsOutsideTheBf16Tolerance) {
  Pix2pix model(GoldenConfig());
  const StepOutcome s = RunGoldenStep("pix2pix_step_bf16", CpuBackend(), MathPrecision::kFp32, model);
  const Tensor want = LoadGolden("pix2pix_step_bf16", "real_logits.npy");
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(s.result.real_logits.at(i)) - want.at(i)));
  }
  EXPECT_GT(worst, 100 * kFp32.logits) << "fp32 and bf16 logits are too close to tell the arithmetic apart";
}

}  // namespace
}  // namespace gantry
