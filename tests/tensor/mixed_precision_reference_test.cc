// The reference backend's mixed precision: operands rounded to the 16-bit format, then
// the fp32 code. Checked bit for bit against fp32 runs on operands rounded beforehand.
#include <bit>
#include <cmath>
#include <vector>

#include "common/bf16.h"
#include "common/fp16.h"
#include "gtest/gtest.h"
#include "worker/tensor/cpu/cpu_backend.h"
#include "worker/tensor/cpu/operand_rounding.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

// Values spread over many binades, so every rounding step is exercised.
std::vector<float> RandomValues(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = static_cast<float>((2.0 * rng.Uniform() - 1.0) * (1.0 + 1000.0 * rng.Uniform()));
  return v;
}

std::vector<float> Rounded(MathPrecision p, std::vector<float> v) {
  RoundToPrecision(p, static_cast<int64_t>(v.size()), v.data(), v.data());
  return v;
}

TEST(MixedPrecisionReferenceTest, RoundToPrecisionUsesTheStorageFormats) {
  const std::vector<float> v = RandomValues(4096, 1);
  const std::vector<float> b = Rounded(MathPrecision::kBf16, v), h = Rounded(MathPrecision::kFp16, v);
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(b[i], bf16::FromFloat(v[i]).ToFloat());
    ASSERT_EQ(h[i], fp16::FromFloat(v[i]).ToFloat());
  }
  EXPECT_EQ(Rounded(MathPrecision::kFp32, v), v);
  EXPECT_NE(b, v);
  EXPECT_NE(h, v);
}

// The vectorised rounding against the scalar definitions over a sweep of float bit
// patterns: every exponent (subnormals, overflow to Inf, NaN) and many mantissas.
// An operand that holds bf16 values already (a saved input widened back) is used in
// place; one value that is not, anywhere (first block, last element), makes a rounded copy.
TEST(MixedPrecisionReferenceTest, OperandsAlreadyRoundedAreUsedInPlace) {
  const std::vector<float> exact = Rounded(MathPrecision::kBf16, RandomValues(1000, 3));
  std::vector<float> scratch;
  const auto n = static_cast<int64_t>(exact.size());
  EXPECT_TRUE(AlreadyAtPrecision(MathPrecision::kBf16, n, exact.data()));
  EXPECT_EQ(RoundedOperand(MathPrecision::kBf16, n, exact.data(), scratch), exact.data());
  EXPECT_FALSE(AlreadyAtPrecision(MathPrecision::kFp16, n, exact.data()));  // fp16 is never checked
  for (size_t at : {size_t{0}, size_t{300}, exact.size() - 1}) {
    SCOPED_TRACE(at);
    std::vector<float> one_off = exact;
    one_off[at] = std::nextafter(one_off[at], 1e30f);
    EXPECT_FALSE(AlreadyAtPrecision(MathPrecision::kBf16, n, one_off.data()));
    const float* rounded = RoundedOperand(MathPrecision::kBf16, n, one_off.data(), scratch);
    ASSERT_EQ(rounded, scratch.data());
    EXPECT_EQ(std::vector<float>(rounded, rounded + n), Rounded(MathPrecision::kBf16, one_off));
  }
  // A strided matrix: only the rows' cols values count, not the padding between rows.
  std::vector<float> padded = exact;
  for (size_t r = 0; r < 10; ++r) padded[r * 100 + 99] = 1.0f + std::ldexp(1.0f, -20);
  int64_t ld = 0;
  EXPECT_TRUE(RowsAlreadyAtPrecision(MathPrecision::kBf16, 10, 99, padded.data(), 100));
  EXPECT_EQ(RoundedMatrix(MathPrecision::kBf16, 10, 99, padded.data(), 100, scratch, &ld), padded.data());
  EXPECT_EQ(ld, 100);
  EXPECT_FALSE(RowsAlreadyAtPrecision(MathPrecision::kBf16, 10, 100, padded.data(), 100));
}

TEST(MixedPrecisionReferenceTest, RoundToPrecisionMatchesTheScalarDefinitionEverywhere) {
  std::vector<float> v;
  for (uint64_t u = 0; u < 0x100000000ull; u += 0x10001ull * 13) {
    v.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
  }
  v.resize(v.size() / 16 * 16 + 5);  // a tail past the vector loop as well
  const std::vector<float> b = Rounded(MathPrecision::kBf16, v), h = Rounded(MathPrecision::kFp16, v);
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) {
      ASSERT_TRUE(std::isnan(b[i]) && std::isnan(h[i])) << i;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(b[i]), std::bit_cast<uint32_t>(bf16::FromFloat(v[i]).ToFloat())) << v[i];
    ASSERT_EQ(std::bit_cast<uint32_t>(h[i]), std::bit_cast<uint32_t>(fp16::FromFloat(v[i]).ToFloat())) << v[i];
  }
}

TEST(MixedPrecisionReferenceTest, GemmRoundsBothOperandsOnly) {
  const int64_t m = 7, n = 9, k = 33, lda = k + 3, ldb = n + 2;  // strided A and B
  const std::vector<float> a = RandomValues(m * lda, 2), b = RandomValues(k * ldb, 3), c0 = RandomValues(m * n, 4);
  for (MathPrecision p : {MathPrecision::kBf16, MathPrecision::kFp16}) {
    SCOPED_TRACE(MathPrecisionName(p));
    std::vector<float> mixed = c0, expected = c0, fp32 = c0;
    CpuBackend().Gemm(p, false, false, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 1.5f, mixed.data(), n);
    const std::vector<float> ra = Rounded(p, a), rb = Rounded(p, b);
    CpuBackend().Gemm(false, false, m, n, k, 0.5f, ra.data(), lda, rb.data(), ldb, 1.5f, expected.data(), n);
    CpuBackend().Gemm(false, false, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 1.5f, fp32.data(), n);
    EXPECT_EQ(mixed, expected);  // C itself (beta) is not rounded
    EXPECT_NE(mixed, fp32);
  }
}

TEST(MixedPrecisionReferenceTest, ConvolutionsRoundTheirOperands) {
  const ConvProblem fp32{.batch = 3, .in_channels = 2, .out_channels = 3, .in_height = 7, .in_width = 6,
                         .out_height = 4, .out_width = 3, .kernel = 3, .stride = 2, .padding = 1};
  const int64_t xs = fp32.batch * fp32.in_image_size(), ys = fp32.batch * fp32.out_image_size();
  const std::vector<float> x = RandomValues(xs, 5), w = RandomValues(fp32.weight_size(), 6), dy = RandomValues(ys, 7);
  const std::vector<float> dw0 = RandomValues(fp32.weight_size(), 8);
  Backend& be = CpuBackend();
  for (MathPrecision prec : {MathPrecision::kBf16, MathPrecision::kFp16}) {
    SCOPED_TRACE(MathPrecisionName(prec));
    ConvProblem p = fp32;
    p.precision = prec;
    const std::vector<float> rx = Rounded(prec, x), rw = Rounded(prec, w), rdy = Rounded(prec, dy);
    std::vector<float> y(ys), y_ref(ys), dx(xs), dx_ref(xs), dw = dw0, dw_ref = dw0;
    be.ConvForward(p, x.data(), w.data(), y.data());
    be.ConvForward(fp32, rx.data(), rw.data(), y_ref.data());
    EXPECT_EQ(y, y_ref);
    be.ConvBackwardData(p, dy.data(), w.data(), dx.data());
    be.ConvBackwardData(fp32, rdy.data(), rw.data(), dx_ref.data());
    EXPECT_EQ(dx, dx_ref);
    be.ConvBackwardWeights(p, x.data(), dy.data(), dw.data());
    be.ConvBackwardWeights(fp32, rx.data(), rdy.data(), dw_ref.data());
    EXPECT_EQ(dw, dw_ref);  // the accumulator (dw's old value) is not rounded
  }
}

}  // namespace
}  // namespace gantry
