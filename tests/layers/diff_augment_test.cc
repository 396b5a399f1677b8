// DiffAugment (worker/layers/diff_augment.h): its gradients against finite differences,
// its forward and backward against the authors' formulas in PyTorch with given draws
// (tests/golden/diff_augment/, scripts/make_goldens.py), its draws' ranges, and that a
// batch split by rows augments exactly as the whole batch.
#include "worker/layers/diff_augment.h"

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckLayerGradients;
using ::gantry::testing::RandomTensor;

constexpr AugmentTransforms kColor{.color = true};
constexpr AugmentTransforms kTranslation{.translation = true};
constexpr AugmentTransforms kCutout{.cutout = true};
constexpr AugmentTransforms kAll{.color = true, .translation = true, .cutout = true};

Context Training(uint64_t seed, int64_t row_offset = 0) {
  Context ctx;
  ctx.training = true;
  ctx.dropout_seed = seed;
  ctx.row_offset = row_offset;
  return ctx;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// The op is affine in the image, so central differences are exact up to fp32 round-off:
// a wrong adjoint (an unshifted gradient, a missing mean term) misses by O(1).
TEST(DiffAugmentTest, GradientsMatchFiniteDifferencesForEachPolicyAndAllTogether) {
  const std::map<std::string, AugmentTransforms> policies = {
      {"color", kColor}, {"translation", kTranslation}, {"cutout", kCutout}, {"all", kAll},
      {"color,cutout", AugmentTransforms{.color = true, .cutout = true}}};
  for (const auto& [name, transforms] : policies) {
    SCOPED_TRACE(name);
    DiffAugment layer(transforms);
    // Several seeds and a row offset, so shifts and rectangles of both signs are probed.
    for (uint64_t seed : {3u, 4u, 5u}) CheckLayerGradients(layer, nullptr, Shape{3, 3, 16, 12}, Training(seed, 7));
  }
}

TEST(DiffAugmentTest, AGreyImagesSaturationIsTheIdentity) {
  // One channel: every value is its pixel's channel mean, so only brightness and contrast act.
  const Tensor x = RandomTensor(Shape{2, 1, 8, 8}, 11);
  const std::vector<AugmentDraw> draws = {DrawAugment(1, 0, 8, 8), DrawAugment(1, 1, 8, 8)};
  std::vector<AugmentDraw> unsaturated = draws;
  for (AugmentDraw& d : unsaturated) d.saturation = 1;
  EXPECT_TRUE(SameBits(AugmentForward(kColor, draws, x), AugmentForward(kColor, unsaturated, x)));
}

// The goldens are float64 results on exact float32 inputs and dyadic draws, rounded once;
// the C++ side's fp32 means over 3 channels and 480 values are off by a few ulps of the
// values (1e-5 here), while a wrong shift direction, rectangle or mean moves elements by
// a sizeable fraction of the value scale.
TEST(DiffAugmentTest, ForwardAndBackwardMatchTheAuthorsFormulasInPyTorch) {
  const Tensor x = testing::LoadGolden("diff_augment", "x.npy");
  const Tensor dy = testing::LoadGolden("diff_augment", "dy.npy");
  const Tensor table = testing::LoadGolden("diff_augment", "draws.npy");
  ASSERT_EQ(table.shape(), (Shape{x.dim(0), 7}));
  std::vector<AugmentDraw> draws;
  for (int64_t n = 0; n < table.dim(0); ++n) {
    const float* row = table.data() + n * 7;
    draws.push_back(AugmentDraw{row[0], row[1], row[2], static_cast<int64_t>(row[3]), static_cast<int64_t>(row[4]),
                                static_cast<int64_t>(row[5]), static_cast<int64_t>(row[6])});
  }
  const std::map<std::string, AugmentTransforms> policies = {
      {"color", kColor}, {"translation", kTranslation}, {"cutout", kCutout}, {"all", kAll}};
  for (const auto& [name, transforms] : policies) {
    const Tensor y = testing::LoadGolden("diff_augment", "y_" + name + ".npy");
    const Tensor dx = testing::LoadGolden("diff_augment", "dx_" + name + ".npy");
    testing::ExpectAllClose(AugmentForward(transforms, draws, x), y, 1e-5 * testing::MaxAbs(y), 1e-5, name + " y");
    testing::ExpectAllClose(AugmentBackward(transforms, draws, dy), dx, 1e-5 * testing::MaxAbs(dx), 1e-5,
                            name + " dx");
  }
}

// The layer transforms row i with the draws of global row row_offset + i: a batch split
// over ranks at any row is augmented, and differentiated, bit for bit as the whole batch.
TEST(DiffAugmentTest, ASplitBatchIsAugmentedExactlyAsTheWholeBatch) {
  DiffAugment layer(kAll);
  const Tensor x = RandomTensor(Shape{7, 3, 16, 16}, 21);
  const Tensor dy = RandomTensor(Shape{7, 3, 16, 16}, 22);
  ActivationCache whole_cache;
  const Tensor whole = layer.Forward(Training(99), x, &whole_cache);
  const Tensor whole_dx = layer.Backward(Training(99), dy, whole_cache, true);
  for (int64_t split : {1, 3, 4}) {
    SCOPED_TRACE(split);
    ActivationCache first_cache, second_cache;
    const Tensor first = layer.Forward(Training(99, 0), x.Slice(0, split), &first_cache);
    const Tensor second = layer.Forward(Training(99, split), x.Slice(split, 7), &second_cache);
    EXPECT_TRUE(SameBits(first, whole.Slice(0, split)));
    EXPECT_TRUE(SameBits(second, whole.Slice(split, 7)));
    EXPECT_TRUE(SameBits(layer.Backward(Training(99, 0), dy.Slice(0, split), first_cache, true),
                         whole_dx.Slice(0, split)));
    EXPECT_TRUE(SameBits(layer.Backward(Training(99, split), dy.Slice(split, 7), second_cache, true),
                         whole_dx.Slice(split, 7)));
  }
  // Without the offset, the second part would repeat the first part's draws.
  ActivationCache cache;
  EXPECT_FALSE(SameBits(layer.Forward(Training(99, 0), x.Slice(3, 7), &cache), whole.Slice(3, 7)));
}

TEST(DiffAugmentTest, DrawsCoverTheirRangesAndDependOnSeedAndRow) {
  constexpr int64_t kH = 64, kW = 32;  // shifts up to 8 and 4, a 32 x 16 cutout
  std::set<int64_t> shift_y, shift_x, cut_top, cut_left;
  std::set<float> brightness, saturation, contrast;
  for (int64_t row = 0; row < 20000; ++row) {
    const AugmentDraw d = DrawAugment(5, row, kH, kW);
    brightness.insert(d.brightness);
    saturation.insert(d.saturation);
    contrast.insert(d.contrast);
    shift_y.insert(d.shift_y);
    shift_x.insert(d.shift_x);
    cut_top.insert(d.cut_top);
    cut_left.insert(d.cut_left);
  }
  const float lo_b = *brightness.begin(), hi_b = *brightness.rbegin();
  const float lo_s = *saturation.begin(), hi_s = *saturation.rbegin();
  const float lo_k = *contrast.begin(), hi_k = *contrast.rbegin();
  EXPECT_GE(lo_b, -0.5f);
  EXPECT_LT(hi_b, 0.5f);
  EXPECT_LT(lo_b, -0.49f);
  EXPECT_GT(hi_b, 0.49f);
  EXPECT_GE(lo_s, 0.0f);
  EXPECT_LT(hi_s, 2.0f);
  EXPECT_LT(lo_s, 0.01f);
  EXPECT_GT(hi_s, 1.99f);
  EXPECT_GE(lo_k, 0.5f);
  EXPECT_LT(hi_k, 1.5f);
  EXPECT_LT(lo_k, 0.51f);
  EXPECT_GT(hi_k, 1.49f);
  // Every integer of each range, nothing outside: shifts in [-8, 8] and [-4, 4]; the
  // cutout's centre in [0, 64] (even 32-row cutout) and [0, 32] (even 16 columns).
  EXPECT_EQ(shift_y.size(), 17u);
  EXPECT_EQ(*shift_y.begin(), -8);
  EXPECT_EQ(*shift_y.rbegin(), 8);
  EXPECT_EQ(shift_x.size(), 9u);
  EXPECT_EQ(*shift_x.begin(), -4);
  EXPECT_EQ(*shift_x.rbegin(), 4);
  EXPECT_EQ(cut_top.size(), 65u);
  EXPECT_EQ(*cut_top.begin(), -16);
  EXPECT_EQ(*cut_top.rbegin(), 48);
  EXPECT_EQ(cut_left.size(), 33u);
  EXPECT_EQ(*cut_left.begin(), -8);
  EXPECT_EQ(*cut_left.rbegin(), 24);
  // An odd cutout (side 10: 5 columns) centres on a column of the image: [0, 9] - 2.
  std::set<int64_t> odd;
  for (int64_t row = 0; row < 2000; ++row) odd.insert(DrawAugment(5, row, 10, 10).cut_left);
  EXPECT_EQ(odd.size(), 10u);
  EXPECT_EQ(*odd.begin(), -2);
  EXPECT_EQ(*odd.rbegin(), 7);

  const AugmentDraw a = DrawAugment(5, 3, kH, kW);
  EXPECT_EQ(DrawAugment(5, 3, kH, kW).brightness, a.brightness);
  EXPECT_NE(DrawAugment(6, 3, kH, kW).brightness, a.brightness);
  EXPECT_NE(DrawAugment(5, 4, kH, kW).brightness, a.brightness);
}

TEST(DiffAugmentTest, TransformsDoWhatTheySayOnAKnownImage) {
  // A 1 x 8 x 8 ramp; shift down-right by (1, -2) reads rows i + 1 and columns j - 2.
  Tensor x = Tensor::Zeros(Shape{1, 1, 8, 8});
  for (int64_t i = 0; i < 64; ++i) x.data()[i] = static_cast<float>(i + 1);
  AugmentDraw d;
  d.shift_y = 1;
  d.shift_x = -2;
  d.cut_top = -2;  // a 4 x 4 cutout over rows [-2, 2) and columns [6, 10): rows 0-1, columns 6-7
  d.cut_left = 6;
  const std::vector<AugmentDraw> draws = {d};
  const Tensor moved = AugmentForward(kTranslation, draws, x);
  EXPECT_EQ(moved.at(0 * 8 + 2), x.at(1 * 8 + 0));
  EXPECT_EQ(moved.at(6 * 8 + 7), x.at(7 * 8 + 5));
  EXPECT_EQ(moved.at(7 * 8 + 3), 0.0f);  // row 8 lies outside
  EXPECT_EQ(moved.at(3 * 8 + 1), 0.0f);  // column -1 lies outside
  const Tensor cut = AugmentForward(kCutout, draws, x);
  int zeros = 0;
  for (int64_t i = 0; i < 64; ++i) zeros += cut.at(i) == 0.0f;
  EXPECT_EQ(zeros, 4);
  EXPECT_EQ(cut.at(1 * 8 + 7), 0.0f);
  EXPECT_EQ(cut.at(2 * 8 + 7), x.at(2 * 8 + 7));
  // Colour: brightness 0.25 with contrast 1 adds 0.25; contrast 0.5 halves the distance to the mean.
  d = AugmentDraw{.brightness = 0.25f};
  EXPECT_EQ(AugmentForward(kColor, std::vector<AugmentDraw>{d}, x).at(10), x.at(10) + 0.25f);
  d = AugmentDraw{.contrast = 0.5f};
  EXPECT_FLOAT_EQ(AugmentForward(kColor, std::vector<AugmentDraw>{d}, x).at(0), (1.0f - 32.5f) * 0.5f + 32.5f);
}

TEST(DiffAugmentTest, NoTransformOrEvalModeIsTheIdentity) {
  const Tensor x = RandomTensor(Shape{2, 3, 8, 8}, 4);
  const Tensor dy = RandomTensor(Shape{2, 3, 8, 8}, 5);
  Context eval = Training(1);
  eval.training = false;
  DiffAugment all(kAll), none(AugmentTransforms{});
  for (auto [layer, ctx] : {std::pair{&all, eval}, std::pair{&none, Training(1)}}) {
    ActivationCache cache;
    EXPECT_TRUE(layer->Forward(ctx, x, &cache).SharesStorageWith(x));
    EXPECT_TRUE(cache.saved.empty());
    EXPECT_TRUE(layer->Backward(ctx, dy, cache, true).SharesStorageWith(dy));
  }
  ActivationCache cache;
  all.Forward(Training(1), x, &cache);
  EXPECT_FALSE(all.Backward(Training(1), dy, cache, /*want_input_grad=*/false).defined());
  EXPECT_EQ(all.OutputShape(x.shape()), x.shape());
  EXPECT_EQ(all.name(), "diff_augment");
}

}  // namespace
}  // namespace gantry
