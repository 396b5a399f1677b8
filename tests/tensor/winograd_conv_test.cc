// The Winograd F(3x3, 4x4) convolutions against a direct sum in double precision written
// out here, on problems with odd and even output sizes, every padding the route takes,
// channel counts off any blocking, and batches split into several chunks. The bound is in
// units of the outputs' largest magnitude (the same sum over |operands|): norm-wise, see
// WorstGap.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/cpu/winograd_conv.h"

namespace gantry {
namespace {

using testing::RandomTensor;

// fp32 error of the transforms in units of the largest magnitude: measured worst 1.3e-6 on
// these problems (the 1x1 output's backward-weights; 2e-7 to 6e-7 elsewhere). A wrong coefficient or a misplaced tile is off by O(1).
constexpr double kWinogradTolerance = 1e-5;

ConvProblem WinogradProblem(int64_t n, int64_t c, int64_t o, int64_t h, int64_t w, int64_t pad) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = h, .in_width = w,
                     .out_height = ConvOutSize(h, 4, 1, pad), .out_width = ConvOutSize(w, 4, 1, pad),
                     .kernel = 4, .stride = 1, .padding = pad};
}

std::vector<ConvProblem> Problems() {
  return {
      WinogradProblem(2, 5, 3, 9, 12, 1),     // odd output height, even width
      WinogradProblem(1, 3, 4, 5, 4, 0),      // a 2x1 output: a single tile, seven ninths dropped
      WinogradProblem(3, 17, 19, 10, 9, 2),   // channels off any blocking, odd width
      WinogradProblem(2, 8, 6, 7, 8, 3),      // the largest padding (backward-data then reads dy unpadded)
      WinogradProblem(9, 6, 20, 25, 25, 1),   // 64 tiles a sample: the batch runs in two chunks
      WinogradProblem(2, 24, 32, 32, 32, 1),  // PatchGAN's conv4 shape (256 -> 512 at 256 px), narrowed
  };
}

// x[n][c][iy][ix] with zeros outside the image.
double At(const ConvProblem& p, const std::vector<double>& x, int64_t n, int64_t c, int64_t iy, int64_t ix) {
  if (iy < 0 || iy >= p.in_height || ix < 0 || ix >= p.in_width) return 0.0;
  return x[static_cast<size_t>(((n * p.in_channels + c) * p.in_height + iy) * p.in_width + ix)];
}

std::vector<double> Widen(const Tensor& t, bool magnitude) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = magnitude ? std::fabs(t.at(i)) : t.at(i);
  return out;
}

// The three passes straight from conv_problem.h's definition, in double.
struct Direct {
  const ConvProblem& p;
  std::vector<double> x, w, dy;

  double W(int64_t o, int64_t c, int64_t ky, int64_t kx) const {
    return w[static_cast<size_t>(((o * p.in_channels + c) * 4 + ky) * 4 + kx)];
  }
  double Dy(int64_t n, int64_t o, int64_t oy, int64_t ox) const {
    return dy[static_cast<size_t>(((n * p.out_channels + o) * p.out_height + oy) * p.out_width + ox)];
  }
  std::vector<double> Forward() const {
    std::vector<double> y(static_cast<size_t>(p.batch * p.out_image_size()), 0.0);
    size_t i = 0;
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t o = 0; o < p.out_channels; ++o)
        for (int64_t oy = 0; oy < p.out_height; ++oy)
          for (int64_t ox = 0; ox < p.out_width; ++ox, ++i)
            for (int64_t c = 0; c < p.in_channels; ++c)
              for (int64_t ky = 0; ky < 4; ++ky)
                for (int64_t kx = 0; kx < 4; ++kx)
                  y[i] += W(o, c, ky, kx) * At(p, x, n, c, oy - p.padding + ky, ox - p.padding + kx);
    return y;
  }
  std::vector<double> BackwardData() const {
    std::vector<double> dx(static_cast<size_t>(p.batch * p.in_image_size()), 0.0);
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t o = 0; o < p.out_channels; ++o)
        for (int64_t oy = 0; oy < p.out_height; ++oy)
          for (int64_t ox = 0; ox < p.out_width; ++ox)
            for (int64_t c = 0; c < p.in_channels; ++c)
              for (int64_t ky = 0; ky < 4; ++ky)
                for (int64_t kx = 0; kx < 4; ++kx) {
                  const int64_t iy = oy - p.padding + ky, ix = ox - p.padding + kx;
                  if (iy < 0 || iy >= p.in_height || ix < 0 || ix >= p.in_width) continue;
                  dx[static_cast<size_t>(((n * p.in_channels + c) * p.in_height + iy) * p.in_width + ix)] +=
                      W(o, c, ky, kx) * Dy(n, o, oy, ox);
                }
    return dx;
  }
  std::vector<double> BackwardWeights() const {
    std::vector<double> dw(w.size(), 0.0);
    for (int64_t o = 0; o < p.out_channels; ++o)
      for (int64_t c = 0; c < p.in_channels; ++c)
        for (int64_t ky = 0; ky < 4; ++ky)
          for (int64_t kx = 0; kx < 4; ++kx) {
            double sum = 0.0;
            for (int64_t n = 0; n < p.batch; ++n)
              for (int64_t oy = 0; oy < p.out_height; ++oy)
                for (int64_t ox = 0; ox < p.out_width; ++ox)
                  sum += Dy(n, o, oy, ox) * At(p, x, n, c, oy - p.padding + ky, ox - p.padding + kx);
            dw[static_cast<size_t>(((o * p.in_channels + c) * 4 + ky) * 4 + kx)] = sum;
          }
    return dw;
  }
};

LoweringGemm ReferenceGemm() {
  return [](bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
            const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    CpuBackend().Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
}

// The largest |actual - expected| (actual - start for an accumulated result) over the
// largest magnitude: a norm-wise bound. Winograd's rounding is bounded norm-wise, not per
// element: an output's error comes from the whole 6x6 patch its tile transforms, so an
// output whose own terms are small (the single product of a 1x1 output's weight gradient)
// carries error in proportion to its neighbours'.
double WorstGap(const Tensor& actual, const std::vector<double>& start, const std::vector<double>& expected,
                const std::vector<double>& magnitude) {
  double worst = 0.0, largest = 0.0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const size_t j = static_cast<size_t>(i);
    const double got = actual.at(i) - (start.empty() ? 0.0 : start[j]);
    worst = std::max(worst, std::fabs(got - expected[j]));
    largest = std::max(largest, magnitude[j]);
  }
  return worst / (largest + 1e-30);
}

struct Operands {
  Tensor x, w, dy, dw0;
};
Operands MakeOperands(const ConvProblem& p) {
  return {RandomTensor(Shape{p.batch, p.in_channels, p.in_height, p.in_width}, 11),
          RandomTensor(Shape{p.out_channels, p.in_channels, 4, 4}, 12),
          RandomTensor(Shape{p.batch, p.out_channels, p.out_height, p.out_width}, 13),
          RandomTensor(Shape{p.out_channels, p.in_channels, 4, 4}, 14)};
}

TEST(WinogradConvTest, AppliesToStrideOneFourByFourKernelsWithPaddingBelowTheKernelThatDoNotCoverTheInput) {
  EXPECT_TRUE(WinogradConvApplies(WinogradProblem(2, 256, 512, 32, 32, 1)));
  EXPECT_TRUE(WinogradConvApplies(WinogradProblem(1, 3, 4, 4, 4, 3)));
  ConvProblem strided = WinogradProblem(2, 8, 8, 16, 16, 1);
  strided.stride = 2;
  strided.out_height = strided.out_width = ConvOutSize(16, 4, 2, 1);
  EXPECT_FALSE(WinogradConvApplies(strided));
  ConvProblem five = WinogradProblem(2, 8, 8, 16, 16, 2);
  five.kernel = 5;
  five.out_height = five.out_width = ConvOutSize(16, 5, 1, 2);
  EXPECT_FALSE(WinogradConvApplies(five));
  // A kernel over the whole unpadded input is a matrix product (the lowered route's).
  EXPECT_FALSE(WinogradConvApplies(WinogradProblem(1, 3, 4, 4, 4, 0)));
}

// Columns and coverage count the 3x3 tiles of the plane each pass writes: y for forward
// and backward-weights, dx for backward-data.
TEST(WinogradConvTest, ColumnsAndCoverageCountTheTilesOfTheWrittenPlane) {
  const ConvProblem at_256px = WinogradProblem(8, 4, 4, 32, 32, 1);  // y 31x31: 11x11 tiles; dx 32x32: 11x11
  EXPECT_EQ(WinogradColumns(at_256px, ConvOp::kForward), 8 * 121);
  EXPECT_EQ(WinogradColumns(at_256px, ConvOp::kBackwardWeights), 8 * 121);
  EXPECT_EQ(WinogradColumns(at_256px, ConvOp::kBackwardData), 8 * 121);
  EXPECT_DOUBLE_EQ(WinogradTileCoverage(at_256px, ConvOp::kForward), 961.0 / 1089.0);
  EXPECT_DOUBLE_EQ(WinogradTileCoverage(at_256px, ConvOp::kBackwardData), 1024.0 / 1089.0);
  const ConvProblem at_128px = WinogradProblem(2, 4, 4, 16, 16, 1);  // y 15x15: 5x5 tiles, whole
  EXPECT_EQ(WinogradColumns(at_128px, ConvOp::kForward), 2 * 25);
  EXPECT_DOUBLE_EQ(WinogradTileCoverage(at_128px, ConvOp::kForward), 1.0);
  const ConvProblem at_64px = WinogradProblem(1, 4, 4, 8, 8, 1);  // y 7x7: 3x3 tiles over 9x9
  EXPECT_DOUBLE_EQ(WinogradTileCoverage(at_64px, ConvOp::kForward), 49.0 / 81.0);
  const ConvProblem wide = WinogradProblem(1, 4, 4, 4, 10, 3);  // y 7x13 (padding 3): 3x5 tiles
  EXPECT_EQ(WinogradColumns(wide, ConvOp::kForward), 15);
  EXPECT_DOUBLE_EQ(WinogradTileCoverage(wide, ConvOp::kForward), 91.0 / 135.0);
}

TEST(WinogradConvTest, EveryPassMatchesTheDirectSum) {
  for (const ConvProblem& p : Problems()) {
    SCOPED_TRACE(p.ToString());
    const Operands ops = MakeOperands(p);
    const Direct exact{p, Widen(ops.x, false), Widen(ops.w, false), Widen(ops.dy, false)};
    const Direct size{p, Widen(ops.x, true), Widen(ops.w, true), Widen(ops.dy, true)};

    Tensor y = Tensor::Zeros(ops.dy.shape());
    WinogradConvForward(p, ops.x.data(), ops.w.data(), y.data(), ReferenceGemm());
    const double forward = WorstGap(y, {}, exact.Forward(), size.Forward());
    EXPECT_LE(forward, kWinogradTolerance) << "forward";

    Tensor dx = RandomTensor(ops.x.shape(), 15);  // overwritten, not accumulated
    WinogradConvBackwardData(p, ops.dy.data(), ops.w.data(), dx.data(), ReferenceGemm());
    const double data = WorstGap(dx, {}, exact.BackwardData(), size.BackwardData());
    EXPECT_LE(data, kWinogradTolerance) << "backward-data";

    Tensor dw = ops.dw0.Clone();  // accumulated onto
    WinogradConvBackwardWeights(p, ops.x.data(), ops.dy.data(), dw.data(), ReferenceGemm());
    const double weights = WorstGap(dw, Widen(ops.dw0, false), exact.BackwardWeights(), size.BackwardWeights());
    EXPECT_LE(weights, kWinogradTolerance) << "backward-weights";
    std::printf("  %s: worst gap / magnitude forward %.2g, backward-data %.2g, backward-weights %.2g\n",
                p.ToString().c_str(), forward, data, weights);
  }
}

// The same call twice gives the same bits (the chunks and GEMMs run in a fixed order), so
// ranks that compute the same problem agree exactly.
TEST(WinogradConvTest, IsDeterministic) {
  const ConvProblem p = Problems()[4];
  const Operands ops = MakeOperands(p);
  Tensor first = ops.dw0.Clone(), second = ops.dw0.Clone();
  WinogradConvBackwardWeights(p, ops.x.data(), ops.dy.data(), first.data(), ReferenceGemm());
  WinogradConvBackwardWeights(p, ops.x.data(), ops.dy.data(), second.data(), ReferenceGemm());
  for (int64_t i = 0; i < first.numel(); ++i) ASSERT_EQ(first.at(i), second.at(i)) << i;
}

}  // namespace
}  // namespace gantry
