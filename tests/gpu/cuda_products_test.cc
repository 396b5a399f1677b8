// The CUDA GEMM and convolutions against the Eigen reference: fp32 to fp32 round-off
// (1e-5 of sum |a*b|, as the oneDNN backend), bf16 and fp16 against the reference at
// the same precision (kTensorCoreSumTolerance) and against fp32 within the 16-bit
// formats' rounding bound. Shapes: the DCGAN's at batch 64 and odd ones.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using testing::Abs;
using testing::Cuda;
using testing::ExpectWithinBound;
using testing::RandomTensor;
using testing::ToGpu;
using testing::ToHost;

constexpr MathPrecision kSixteenBit[] = {MathPrecision::kBf16, MathPrecision::kFp16};

double RoundingBound(MathPrecision p) {
  return p == MathPrecision::kBf16 ? testing::kBf16ProductTolerance : testing::kFp16ProductTolerance;
}

// --- GEMM ---------------------------------------------------------------------------

struct GemmCase {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra elements per row of every stored matrix
};

const GemmCase kGemmCases[] = {
    {false, true, 64, 12544, 100, 1.0f, 0.0f, 0},  // G linear forward at batch 64: z W^T
    {true, false, 12544, 100, 64, 1.0f, 1.0f, 0},  // its weight gradient: dW += dy^T z
    {false, true, 64, 1, 6272, 1.0f, 0.0f, 0},     // D linear forward
    {true, false, 1, 6272, 64, 1.0f, 1.0f, 0},     // its weight gradient
    {false, false, 64, 6272, 1, 1.0f, 0.0f, 0},    // its input gradient
    {false, false, 17, 33, 65, 0.5f, 1.5f, 3},     // alpha, beta, strided
    {true, true, 9, 31, 20, 1.0f, -1.0f, 1},
    {true, false, 1, 1, 1, 2.0f, 0.0f, 0},
    {false, false, 5, 7, 0, 1.0f, 0.5f, 2},        // k == 0: C = beta C
};

struct GemmOperands {
  Tensor a, b, c0;
  int64_t lda, ldb, ldc;
};

GemmOperands MakeGemmOperands(const GemmCase& t) {
  const int64_t a_rows = t.trans_a ? t.k : t.m, a_cols = t.trans_a ? t.m : t.k;
  const int64_t b_rows = t.trans_b ? t.n : t.k, b_cols = t.trans_b ? t.k : t.n;
  return {RandomTensor(Shape{std::max<int64_t>(a_rows, 1), a_cols + t.pad}, 1),
          RandomTensor(Shape{std::max<int64_t>(b_rows, 1), b_cols + t.pad}, 2),
          RandomTensor(Shape{t.m, t.n + t.pad}, 3), a_cols + t.pad, b_cols + t.pad, t.n + t.pad};
}

// C after the GEMM on `be` (host results); `magnitude` runs it on |operands|.
Tensor RunGemm(Backend& be, bool on_gpu, const GemmCase& t, const GemmOperands& o, MathPrecision p,
               bool magnitude) {
  Tensor a = magnitude ? Abs(o.a) : o.a, b = magnitude ? Abs(o.b) : o.b;
  Tensor c = magnitude ? Abs(o.c0) : o.c0.Clone();
  const float alpha = magnitude ? std::abs(t.alpha) : t.alpha, beta = magnitude ? std::abs(t.beta) : t.beta;
  if (on_gpu) a = ToGpu(a), b = ToGpu(b), c = ToGpu(c);
  be.Gemm(p, t.trans_a, t.trans_b, t.m, t.n, t.k, alpha, a.data(), o.lda, b.data(), o.ldb, beta, c.data(), o.ldc);
  return on_gpu ? ToHost(c) : c;
}

std::string Describe(const GemmCase& t) {
  return "ta=" + std::to_string(t.trans_a) + " tb=" + std::to_string(t.trans_b) + " m=" + std::to_string(t.m) +
         " n=" + std::to_string(t.n) + " k=" + std::to_string(t.k) + " pad=" + std::to_string(t.pad);
}

TEST(CudaGemmTest, Fp32MatchesTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (const GemmCase& t : kGemmCases) {
    SCOPED_TRACE(Describe(t));
    const GemmOperands o = MakeGemmOperands(t);
    const Tensor magnitude = RunGemm(CpuBackend(), false, t, o, MathPrecision::kFp32, true);
    ExpectWithinBound(RunGemm(Cuda(), true, t, o, MathPrecision::kFp32, false),
                      RunGemm(CpuBackend(), false, t, o, MathPrecision::kFp32, false), magnitude,
                      testing::kReorderedSumTolerance, "fp32");
  }
}

TEST(CudaGemmTest, SixteenBitMatchesTheReferenceAndStaysWithinItsBoundOfFp32) {
  GANTRY_CUDA_OR_SKIP();
  for (MathPrecision prec : kSixteenBit) {
    for (const GemmCase& t : kGemmCases) {
      SCOPED_TRACE(Describe(t) + " " + std::string(MathPrecisionName(prec)));
      const GemmOperands o = MakeGemmOperands(t);
      const Tensor magnitude = RunGemm(CpuBackend(), false, t, o, MathPrecision::kFp32, true);
      const Tensor fast = RunGemm(Cuda(), true, t, o, prec, false);
      const Tensor reference16 = RunGemm(CpuBackend(), false, t, o, prec, false);
      const Tensor fp32 = RunGemm(CpuBackend(), false, t, o, MathPrecision::kFp32, false);
      ExpectWithinBound(fast, reference16, magnitude, testing::kTensorCoreSumTolerance, "vs the 16-bit reference");
      ExpectWithinBound(fast, fp32, magnitude, RoundingBound(prec), "vs fp32");
      // bf16's rounding (2^-9 per operand) is far above the accumulation slack, so the
      // result must show it; fp16's (2^-12) is too close to it to tell reliably.
      if (prec == MathPrecision::kBf16 && t.k >= 64) testing::ExpectRoundedOperands(fast, reference16, fp32, magnitude);
    }
  }
}

TEST(CudaGemmTest, BetaZeroIgnoresOldC) {
  GANTRY_CUDA_OR_SKIP();
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
    const Tensor a = ToGpu(RandomTensor(Shape{4, 5}, 1)), b = ToGpu(RandomTensor(Shape{5, 6}, 2));
    Tensor c = Tensor::Zeros(Shape{4, 6}, DType::kF32, Device::kCuda);
    c.Fill(std::numeric_limits<float>::quiet_NaN());
    Cuda().Gemm(prec, false, false, 4, 6, 5, 1.0f, a.data(), 5, b.data(), 6, 0.0f, c.data(), 6);
    const Tensor host = ToHost(c);
    for (int64_t i = 0; i < host.numel(); ++i) ASSERT_FALSE(std::isnan(host.at(i))) << i;
  }
}

// --- convolutions -------------------------------------------------------------------

ConvProblem Problem(int64_t n, int64_t c, int64_t o, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = h, .in_width = w,
                     .out_height = ConvOutSize(h, k, s, p), .out_width = ConvOutSize(w, k, s, p),
                     .kernel = k, .stride = s, .padding = p};
}

std::vector<ConvProblem> Problems() {
  return {
      Problem(64, 128, 256, 7, 7, 5, 1, 2),  // G deconv1's adjoint at batch 64
      Problem(64, 64, 128, 14, 14, 5, 2, 2), // G deconv2's adjoint and D conv2
      Problem(64, 1, 64, 28, 28, 5, 2, 2),   // G deconv3's adjoint and D conv1
      Problem(1, 3, 5, 9, 7, 3, 2, 1),       // odd sizes, batch 1
      Problem(3, 2, 4, 6, 6, 3, 2, 0),       // a trailing input row no window reaches
      Problem(3, 17, 19, 10, 9, 4, 3, 2),    // stride 3, odd channels
      Problem(2, 5, 3, 8, 8, 5, 1, 2),
  };
}

struct ConvCase {
  ConvProblem p;
  Tensor x, w, dy, dw0;
};

ConvCase MakeConvCase(const ConvProblem& p) {
  return {p, RandomTensor(Shape{p.batch, p.in_channels, p.in_height, p.in_width}, 1),
          RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 2),
          RandomTensor(Shape{p.batch, p.out_channels, p.out_height, p.out_width}, 3),
          RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 4)};
}

Tensor Same(const Tensor& t) { return t; }

// `op` of c.p at `precision` on `be` (inputs through `in`: identity or |.|); host result.
Tensor RunConv(Backend& be, bool on_gpu, ConvOp op, const ConvCase& c, MathPrecision precision,
               Tensor (*in)(const Tensor&), const Tensor& dw_start) {
  ConvProblem p = c.p;
  p.precision = precision;
  auto place = [on_gpu](const Tensor& t) { return on_gpu ? ToGpu(t) : t.Clone(); };
  const Device device = on_gpu ? Device::kCuda : Device::kCpu;
  Tensor out;
  switch (op) {
    case ConvOp::kForward:
      out = Tensor::Zeros(c.dy.shape(), DType::kF32, device);
      be.ConvForward(p, place(in(c.x)).data(), place(in(c.w)).data(), out.data());
      break;
    case ConvOp::kBackwardData:
      out = Tensor::Zeros(c.x.shape(), DType::kF32, device);
      be.ConvBackwardData(p, place(in(c.dy)).data(), place(in(c.w)).data(), out.data());
      break;
    case ConvOp::kBackwardWeights:
      out = place(dw_start);
      be.ConvBackwardWeights(p, place(in(c.x)).data(), place(in(c.dy)).data(), out.data());
      break;
  }
  return on_gpu ? ToHost(out) : out;
}

const char* OpName(ConvOp op) {
  return op == ConvOp::kForward ? "forward" : op == ConvOp::kBackwardData ? "backward-data" : "backward-weights";
}

TEST(CudaConvTest, Fp32MatchesTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (const ConvProblem& p : Problems()) {
    const ConvCase c = MakeConvCase(p);
    for (ConvOp op : {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardWeights}) {
      SCOPED_TRACE(p.ToString() + " " + OpName(op));
      const Tensor magnitude = RunConv(CpuBackend(), false, op, c, MathPrecision::kFp32, Abs, Abs(c.dw0));
      ExpectWithinBound(RunConv(Cuda(), true, op, c, MathPrecision::kFp32, Same, c.dw0),
                        RunConv(CpuBackend(), false, op, c, MathPrecision::kFp32, Same, c.dw0), magnitude,
                        testing::kReorderedSumTolerance, "fp32");
    }
  }
}

TEST(CudaConvTest, SixteenBitMatchesTheReferenceAndStaysWithinItsBoundOfFp32) {
  GANTRY_CUDA_OR_SKIP();
  for (MathPrecision prec : kSixteenBit) {
    for (const ConvProblem& p : Problems()) {
      const ConvCase c = MakeConvCase(p);
      for (ConvOp op : {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardWeights}) {
        SCOPED_TRACE(p.ToString() + " " + OpName(op) + " " + std::string(MathPrecisionName(prec)));
        const Tensor magnitude = RunConv(CpuBackend(), false, op, c, MathPrecision::kFp32, Abs, Abs(c.dw0));
        const Tensor fast = RunConv(Cuda(), true, op, c, prec, Same, c.dw0);
        ExpectWithinBound(fast, RunConv(CpuBackend(), false, op, c, prec, Same, c.dw0), magnitude,
                          testing::kTensorCoreSumTolerance, "vs the 16-bit reference");
        ExpectWithinBound(fast, RunConv(CpuBackend(), false, op, c, MathPrecision::kFp32, Same, c.dw0), magnitude,
                          RoundingBound(prec), "vs fp32");
      }
    }
  }
}

}  // namespace
}  // namespace gantry
