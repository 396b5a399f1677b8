// The oneDNN GEMM (matmul) against the Eigen reference, fp32 and 16-bit operands.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry {
namespace {

using testing::Abs;
using testing::ExpectWithinBound;
using testing::RandomTensor;

struct GemmCase {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra elements per row of every stored matrix
};

// The shapes of the DCGAN's Linear layers (batch 3) and odd ones.
const GemmCase kCases[] = {
    {false, true, 3, 12544, 100, 1.0f, 0.0f, 0},   // G linear forward: z W^T
    {true, false, 12544, 100, 3, 1.0f, 1.0f, 0},   // its weight gradient: dW += dy^T z
    {false, true, 3, 1, 6272, 1.0f, 0.0f, 0},      // D linear forward
    {true, false, 1, 6272, 3, 1.0f, 1.0f, 0},      // its weight gradient
    {false, false, 3, 6272, 1, 1.0f, 0.0f, 0},     // its input gradient
    {false, false, 17, 33, 65, 0.5f, 1.5f, 3},     // alpha, beta, strided
    {true, true, 9, 31, 20, 1.0f, -1.0f, 1},
    {true, false, 1, 1, 1, 2.0f, 0.0f, 0},
};

struct Operands {
  Tensor a, b, c0;
  int64_t lda, ldb, ldc;
};

Operands MakeOperands(const GemmCase& t) {
  const int64_t a_rows = t.trans_a ? t.k : t.m, a_cols = t.trans_a ? t.m : t.k;
  const int64_t b_rows = t.trans_b ? t.n : t.k, b_cols = t.trans_b ? t.k : t.n;
  Operands o{RandomTensor(Shape{a_rows, a_cols + t.pad}, 1), RandomTensor(Shape{b_rows, b_cols + t.pad}, 2),
             RandomTensor(Shape{t.m, t.n + t.pad}, 3), a_cols + t.pad, b_cols + t.pad, t.n + t.pad};
  return o;
}

Tensor RunGemm(Backend& be, const GemmCase& t, const Operands& o, MathPrecision p, bool magnitude) {
  Tensor c = magnitude ? Abs(o.c0) : o.c0.Clone();
  const Tensor a = magnitude ? Abs(o.a) : o.a, b = magnitude ? Abs(o.b) : o.b;
  const float alpha = magnitude ? std::abs(t.alpha) : t.alpha, beta = magnitude ? std::abs(t.beta) : t.beta;
  be.Gemm(p, t.trans_a, t.trans_b, t.m, t.n, t.k, alpha, a.data(), o.lda, b.data(), o.ldb, beta, c.data(), o.ldc);
  return c;
}

std::string Describe(const GemmCase& t) {
  return "ta=" + std::to_string(t.trans_a) + " tb=" + std::to_string(t.trans_b) + " m=" + std::to_string(t.m) +
         " n=" + std::to_string(t.n) + " k=" + std::to_string(t.k) + " alpha=" + std::to_string(t.alpha) +
         " beta=" + std::to_string(t.beta) + " pad=" + std::to_string(t.pad);
}

TEST(OnednnGemmTest, Fp32MatchesTheReference) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (const GemmCase& t : kCases) {
    SCOPED_TRACE(Describe(t));
    const Operands o = MakeOperands(t);
    const Tensor magnitude = RunGemm(CpuBackend(), t, o, MathPrecision::kFp32, true);
    ExpectWithinBound(RunGemm(*onednn, t, o, MathPrecision::kFp32, false),
                      RunGemm(CpuBackend(), t, o, MathPrecision::kFp32, false), magnitude,
                      testing::kReorderedSumTolerance, "fp32");
  }
}

TEST(OnednnGemmTest, SixteenBitMatchesTheReferenceAndStaysWithinItsBoundOfFp32) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (MathPrecision prec : {MathPrecision::kBf16, MathPrecision::kFp16}) {
    const double bound = prec == MathPrecision::kBf16 ? testing::kBf16ProductTolerance
                                                      : testing::kFp16ProductTolerance;
    for (const GemmCase& t : kCases) {
      SCOPED_TRACE(Describe(t) + " " + std::string(MathPrecisionName(prec)));
      const Operands o = MakeOperands(t);
      const Tensor magnitude = RunGemm(CpuBackend(), t, o, MathPrecision::kFp32, true);
      const Tensor fast = RunGemm(*onednn, t, o, prec, false);
      const Tensor reference16 = RunGemm(CpuBackend(), t, o, prec, false);
      ExpectWithinBound(fast, reference16, magnitude, testing::kReorderedSumTolerance,
                        "vs reference at the same precision");
      const Tensor fp32 = RunGemm(CpuBackend(), t, o, MathPrecision::kFp32, false);
      ExpectWithinBound(fast, fp32, magnitude, bound, "vs fp32");
      testing::ExpectRoundedOperands(fast, reference16, fp32, magnitude);
    }
  }
}

// beta == 0 overwrites C, NaN included; beta != 0 reads it.
TEST(OnednnGemmTest, BetaZeroIgnoresOldC) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
    const Tensor a = RandomTensor(Shape{4, 5}, 1), b = RandomTensor(Shape{5, 6}, 2);
    Tensor c = Tensor::Zeros(Shape{4, 6});
    c.Fill(std::numeric_limits<float>::quiet_NaN());
    onednn->Gemm(prec, false, false, 4, 6, 5, 1.0f, a.data(), 5, b.data(), 6, 0.0f, c.data(), 6);
    for (int64_t i = 0; i < c.numel(); ++i) ASSERT_FALSE(std::isnan(c.at(i))) << i;
  }
}

}  // namespace
}  // namespace gantry
