// The oneDNN convolutions against the Eigen reference: fp32 to fp32 round-off, bf16 and
// fp16 against the reference at the same precision (same rounded operands, so only the
// summation order differs) and against fp32 within the 16-bit formats' rounding bound.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cpu/cpu_backend.h"
#if GANTRY_HAVE_ONEDNN
#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_runtime.h"
#endif

namespace gantry {
namespace {

using testing::Abs;
using testing::ExpectWithinBound;
using testing::RandomTensor;

ConvProblem Problem(int64_t n, int64_t c, int64_t o, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = h, .in_width = w,
                     .out_height = ConvOutSize(h, k, s, p), .out_width = ConvOutSize(w, k, s, p),
                     .kernel = k, .stride = s, .padding = p};
}

std::vector<ConvProblem> Problems() {
  return {
      Problem(2, 128, 256, 7, 7, 5, 1, 2),   // G deconv1's adjoint (DCGAN, small batch)
      Problem(3, 64, 128, 14, 14, 5, 2, 2),  // G deconv2's adjoint and D conv2
      Problem(1, 1, 64, 28, 28, 5, 2, 2),    // G deconv3's adjoint and D conv1
      Problem(1, 3, 5, 9, 7, 3, 2, 1),       // odd sizes, batch 1
      Problem(3, 2, 4, 6, 6, 3, 2, 0),       // a trailing input row no window reaches
      Problem(3, 17, 19, 10, 9, 4, 3, 2),    // channels off the 16-blocking, stride 3
      Problem(2, 5, 3, 8, 8, 5, 1, 2),
      Problem(2, 40, 1, 11, 9, 4, 1, 1),     // one output channel (PatchGAN's logits)
      Problem(3, 6, 1, 9, 7, 3, 2, 0),       // one output channel, strided, a trailing row
      Problem(1, 3, 1, 37, 35, 5, 3, 2),     // one output channel, rows wider than a block
  };
}

// One op's inputs and the output's starting value (ConvBackwardWeights accumulates).
struct Case {
  ConvProblem p;
  Tensor x, w, dy, dw0;
};

Case MakeCase(const ConvProblem& p) {
  return Case{p, RandomTensor(Shape{p.batch, p.in_channels, p.in_height, p.in_width}, 1),
              RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 2),
              RandomTensor(Shape{p.batch, p.out_channels, p.out_height, p.out_width}, 3),
              RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 4)};
}

// Runs `op` of c.p at `precision` on `be` with inputs taken through `in` (identity or
// |.|, for magnitudes); dw starts from `start`.
Tensor RunOp(Backend& be, ConvOp op, const Case& c, MathPrecision precision, Tensor (*in)(const Tensor&),
             const Tensor& start) {
  ConvProblem p = c.p;
  p.precision = precision;
  switch (op) {
    case ConvOp::kForward: {
      Tensor y = Tensor::Zeros(c.dy.shape());
      be.ConvForward(p, in(c.x).data(), in(c.w).data(), y.data());
      return y;
    }
    case ConvOp::kBackwardData: {
      Tensor dx = Tensor::Zeros(c.x.shape());
      be.ConvBackwardData(p, in(c.dy).data(), in(c.w).data(), dx.data());
      return dx;
    }
    case ConvOp::kBackwardWeights: {
      Tensor dw = start.Clone();
      be.ConvBackwardWeights(p, in(c.x).data(), in(c.dy).data(), dw.data());
      return dw;
    }
  }
  return Tensor();
}

Tensor Same(const Tensor& t) { return t; }

const char* OpName(ConvOp op) {
  return op == ConvOp::kForward ? "forward" : op == ConvOp::kBackwardData ? "backward-data" : "backward-weights";
}

// The oneDNN routes a test runs under: the measured choice, and each route forced (so
// every route is checked on every shape, not only where the choice sends it).
std::vector<std::string> Routes() {
  return {"auto", "native", "rounded-fp32", "batch-as-channels", "lowered", "one-output", "winograd"};
}

// Makes `route` the oneDNN backend's (process-wide) convolution route.
void SelectRoute(const std::string& route) {
#if GANTRY_HAVE_ONEDNN
  std::optional<ConvRoute> forced;
  if (route == "native") forced = ConvRoute::kNative;
  if (route == "rounded-fp32") forced = ConvRoute::kRoundedFp32;
  if (route == "batch-as-channels") forced = ConvRoute::kBatchAsChannels;
  if (route == "lowered") forced = ConvRoute::kLowered;
  if (route == "one-output") forced = ConvRoute::kOneOutput;
  if (route == "winograd") forced = ConvRoute::kWinograd;
  OnednnBackend::ForceConvRoute(forced);
#endif
}

// The magnitude of each output: the op on |operands| (plus |dw0| for the accumulator).
Tensor Magnitude(const Case& c, ConvOp op) {
  Tensor m = RunOp(CpuBackend(), op, c, MathPrecision::kFp32, Abs, Abs(c.dw0));
  return m;
}

TEST(OnednnConvTest, Fp32MatchesTheReference) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (const ConvProblem& p : Problems()) {
    const Case c = MakeCase(p);
    for (ConvOp op : {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardWeights}) {
      SCOPED_TRACE(p.ToString() + " " + OpName(op));
      const Tensor ref = RunOp(CpuBackend(), op, c, MathPrecision::kFp32, Same, c.dw0);
      for (const std::string& route : Routes()) {
        SelectRoute(route);
        const Tensor fast = RunOp(*onednn, op, c, MathPrecision::kFp32, Same, c.dw0);
        ExpectWithinBound(fast, ref, Magnitude(c, op), testing::kReorderedSumTolerance, "fp32 " + route);
      }
      SelectRoute("auto");
    }
  }
}

// bf16 and fp16 against the reference at the same precision (tight: the same rounded
// operands, products exact in fp32), and against fp32 within the format's bound; the
// result must also sit much closer to the 16-bit reference than to fp32.
TEST(OnednnConvTest, SixteenBitMatchesTheReferenceAndStaysWithinItsBoundOfFp32) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (MathPrecision prec : {MathPrecision::kBf16, MathPrecision::kFp16}) {
    const double bound = prec == MathPrecision::kBf16 ? testing::kBf16ProductTolerance
                                                      : testing::kFp16ProductTolerance;
    for (const ConvProblem& p : Problems()) {
      const Case c = MakeCase(p);
      for (ConvOp op : {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardWeights}) {
        SCOPED_TRACE(p.ToString() + " " + OpName(op) + " " + std::string(MathPrecisionName(prec)));
        const Tensor magnitude = Magnitude(c, op);
        const Tensor reference16 = RunOp(CpuBackend(), op, c, prec, Same, c.dw0);
        const Tensor fp32 = RunOp(CpuBackend(), op, c, MathPrecision::kFp32, Same, c.dw0);
        for (const std::string& route : Routes()) {
          SCOPED_TRACE(route);
          SelectRoute(route);
          const Tensor fast = RunOp(*onednn, op, c, prec, Same, c.dw0);
          ExpectWithinBound(fast, reference16, magnitude, testing::kReorderedSumTolerance,
                            "vs reference at the same precision");
          ExpectWithinBound(fast, fp32, magnitude, bound, "vs fp32");
          testing::ExpectRoundedOperands(fast, reference16, fp32, magnitude);
        }
        SelectRoute("auto");
      }
    }
  }
}

// Ranks may run as threads sharing the backend: each thread has its own plans and
// scratch, so concurrent calls on the same problem give the single-thread result.
TEST(OnednnConvTest, ThreadsShareTheBackendSafely) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
    const Case c = MakeCase(Problems()[1]);
    const Tensor expected = RunOp(*onednn, ConvOp::kBackwardWeights, c, prec, Same, c.dw0);
    std::vector<Tensor> results(3);
    std::vector<std::thread> threads;
    for (Tensor& r : results) {
      threads.emplace_back([&, prec] {
        for (int i = 0; i < 3; ++i) r = RunOp(*onednn, ConvOp::kBackwardWeights, c, prec, Same, c.dw0);
      });
    }
    for (std::thread& t : threads) t.join();
    for (const Tensor& r : results) {
      for (int64_t i = 0; i < r.numel(); ++i) ASSERT_EQ(r.at(i), expected.at(i)) << i;
    }
  }
}

// A layer's fused backward passes (ConvBackward, ConvTransposeBackward) give exactly what
// the separate ops give, whether the passes share the operand they both read (both on
// oneDNN's kernels: the first problem at fp32) or not (a lowered or staged pass).
TEST(OnednnConvTest, FusedBackwardsEqualTheSeparatePasses) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  std::vector<ConvProblem> problems = {Problem(2, 16, 32, 16, 16, 4, 2, 1), Problems()[1], Problems()[5]};
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16, MathPrecision::kFp16}) {
    for (ConvProblem p : problems) {
      p.precision = prec;
      SCOPED_TRACE(p.ToString() + " " + std::string(MathPrecisionName(prec)));
      const Case c = MakeCase(p);
      // ConvBackward: dw += grad(x, dy), dx = input gradient of dy.
      Tensor dw_apart = c.dw0.Clone(), dw_fused = c.dw0.Clone();
      Tensor dx_apart = Tensor::Zeros(c.x.shape()), dx_fused = Tensor::Zeros(c.x.shape());
      onednn->ConvBackwardWeights(p, c.x.data(), c.dy.data(), dw_apart.data());
      onednn->ConvBackwardData(p, c.dy.data(), c.w.data(), dx_apart.data());
      onednn->ConvBackward(p, c.x.data(), c.dy.data(), c.w.data(), dx_fused.data(), dw_fused.data());
      for (int64_t i = 0; i < dw_apart.numel(); ++i) ASSERT_EQ(dw_fused.at(i), dw_apart.at(i)) << "dw " << i;
      for (int64_t i = 0; i < dx_apart.numel(); ++i) ASSERT_EQ(dx_fused.at(i), dx_apart.at(i)) << "dx " << i;
      // ConvTransposeBackward: the layer's g is the convolution's input (c.x), its x the
      // convolution's output side (c.dy).
      Tensor tw_apart = c.dw0.Clone(), tw_fused = c.dw0.Clone();
      Tensor tx_apart = Tensor::Zeros(c.dy.shape()), tx_fused = Tensor::Zeros(c.dy.shape());
      onednn->ConvBackwardWeights(p, c.x.data(), c.dy.data(), tw_apart.data());
      onednn->ConvForward(p, c.x.data(), c.w.data(), tx_apart.data());
      onednn->ConvTransposeBackward(p, c.x.data(), c.dy.data(), c.w.data(), tx_fused.data(), tw_fused.data());
      for (int64_t i = 0; i < tw_apart.numel(); ++i) ASSERT_EQ(tw_fused.at(i), tw_apart.at(i)) << "transposed dw " << i;
      for (int64_t i = 0; i < tx_apart.numel(); ++i) ASSERT_EQ(tx_fused.at(i), tx_apart.at(i)) << "transposed dx " << i;
    }
  }
}

// Backward-weights adds to what the gradient held; twice is two contributions.
TEST(OnednnConvTest, BackwardWeightsAccumulates) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  const Case c = MakeCase(Problems()[1]);
  Tensor once = Tensor::Zeros(c.w.shape()), twice = Tensor::Zeros(c.w.shape());
  onednn->ConvBackwardWeights(c.p, c.x.data(), c.dy.data(), once.data());
  onednn->ConvBackwardWeights(c.p, c.x.data(), c.dy.data(), twice.data());
  onednn->ConvBackwardWeights(c.p, c.x.data(), c.dy.data(), twice.data());
  for (int64_t i = 0; i < once.numel(); ++i) ASSERT_FLOAT_EQ(twice.at(i), 2.0f * once.at(i)) << i;
}

#if GANTRY_HAVE_ONEDNN
// The route the measurements in onednn_conv_route.cc pick, on what this CPU offers. On
// fp32 kernels (fp32, and bf16 without bf16 kernels: AVX2, AVX-512 without BF16, or
// ONEDNN_MAX_CPU_ISA below them) lowered takes weight-bound problems (batch x output
// pixels at most a quarter / half / all of out_channels for forward / backward-data /
// backward-weights, 8 or more output channels) and, with fewer than 8 input channels,
// backward-data into 32 or more output channels and backward-weights from 2 input
// channels into 64 or more. Otherwise the one-input-channel backward-data goes to the
// reference, and so does its backward-weights on fp32 kernels that are not AVX-512 (AVX2);
// bf16 backward-weights goes batch-as-channels on bf16 kernels; bf16 without bf16
// kernels runs fp32 kernels on rounded operands. Before all that, on fp32 kernels, one
// output channel goes to the direct kernels; after lowered, fp32 stride-1 4x4 problems
// with 64 or more channels on each side go Winograd where the 3x3 tiles of the plane the
// pass writes (dx for backward-data, y otherwise) have at least 75% of their area inside
// it, and batch x those tiles times the narrower channel count reach 48 Ki for
// backward-data and 6 Ki for the others.
ConvRoute ExpectedRoute(const ConvProblem& p, ConvOp op) {
  const bool fp32_kernels = p.precision == MathPrecision::kFp32 || !onednn::NativeBf16Kernels().native;
  if (fp32_kernels && p.out_channels == 1) return ConvRoute::kOneOutput;
  const int64_t reuse = p.batch * p.out_height * p.out_width, o = p.out_channels;
  const int64_t plane_h = op == ConvOp::kBackwardData ? p.in_height : p.out_height;
  const int64_t plane_w = op == ConvOp::kBackwardData ? p.in_width : p.out_width;
  const int64_t tiles = ((plane_h + 2) / 3) * ((plane_w + 2) / 3), columns = p.batch * tiles;
  const bool covered = 4 * plane_h * plane_w >= 3 * 9 * tiles;  // 75% of the tiles' area
  const int64_t narrow = std::min(p.in_channels, o);
  const bool winograd = p.precision == MathPrecision::kFp32 && p.kernel == 4 && p.stride == 1 && p.padding <= 3 &&
                        covered && narrow >= 64 &&
                        columns * narrow >= (op == ConvOp::kBackwardData ? 48 : 6) * 1024;
  bool lowered;
  if (p.in_channels < 8 && op == ConvOp::kBackwardData) {
    lowered = o >= 32;
  } else if (p.in_channels < 8 && op == ConvOp::kBackwardWeights) {
    lowered = p.in_channels > 1 && o >= 64;
  } else {
    const int64_t per_weight = op == ConvOp::kForward ? 4 : op == ConvOp::kBackwardData ? 2 : 1;
    lowered = o >= 8 && per_weight * reuse <= o;
  }
  if (fp32_kernels && lowered) return ConvRoute::kLowered;
  if (winograd) return ConvRoute::kWinograd;
  if (p.in_channels == 1 && op == ConvOp::kBackwardData) return ConvRoute::kReference;
  if (p.in_channels == 1 && op == ConvOp::kBackwardWeights && fp32_kernels && !onednn::HasAvx512Fp32Kernels()) {
    return ConvRoute::kReference;
  }
  if (p.precision != MathPrecision::kBf16) return ConvRoute::kNative;
  if (!onednn::NativeBf16Kernels().native) return ConvRoute::kRoundedFp32;
  const bool batch_as_channels = p.in_channels == 1 || p.out_height * p.out_width <= 4 * p.batch;
  return op == ConvOp::kBackwardWeights && batch_as_channels ? ConvRoute::kBatchAsChannels : ConvRoute::kNative;
}

// Every op of the DCGAN's problems (at their training batch, 64) and of the Pix2Pix U-Net's
// (a wide outer layer and a weight-bound inner one, batch 4) has oneDNN kernels on the
// native and batch-as-channels routes (no silent fallback to the reference, on any x86-64
// CPU), and the automatic choice is the one ExpectedRoute gives for this CPU.
TEST(OnednnConvTest, DcganAndPix2pixProblemsRunWhereTheRoutesSay) {
  SCOPED_TRACE("bf16 kernels: " + onednn::NativeBf16Kernels().isa);
  std::vector<ConvProblem> problems;
  for (int i = 0; i < 3; ++i) {
    problems.push_back(Problems()[static_cast<size_t>(i)]);
    problems.back().batch = 64;
  }
  problems.push_back(Problem(4, 64, 128, 64, 64, 4, 2, 1));   // U-Net down block 1 at 128 px
  problems.push_back(Problem(4, 512, 1024, 4, 4, 4, 2, 1));   // the adjoint of up block 1 at 128 px
  problems.push_back(Problem(4, 3, 128, 128, 128, 4, 2, 1));  // the adjoint of the output block
  problems.push_back(Problem(4, 7, 16, 128, 128, 4, 2, 1));   // PatchGAN's first convolution at ndf 16
  problems.push_back(Problem(4, 512, 1, 31, 31, 4, 1, 1));    // PatchGAN's logits at 256 px
  problems.push_back(Problem(16, 512, 1024, 8, 8, 4, 2, 1));  // the adjoint of up block 2 at 128 px, batch 16
  problems.push_back(Problem(4, 256, 512, 32, 32, 4, 1, 1));  // PatchGAN's stride-1 convolution at 256 px
  problems.push_back(Problem(2, 256, 512, 16, 16, 4, 1, 1));  // the same at 128 px, batch 2 (not backward-data)
  problems.push_back(Problem(8, 64, 128, 16, 16, 4, 1, 1));   // at 128 px, ndf 16 (not backward-data)
  problems.push_back(Problem(2, 64, 128, 16, 16, 4, 1, 1));   // the same at batch 2: no pass
  problems.push_back(Problem(16, 256, 512, 8, 8, 4, 1, 1));   // at 64 px: a 7x7 map, 60% covered: no pass
  problems.push_back(Problem(64, 256, 512, 4, 4, 4, 1, 1));   // at 32 px: all but backward-data (4x4 dx)
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
    for (ConvProblem p : problems) {
      p.precision = prec;
      for (ConvOp op : {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardWeights}) {
        SCOPED_TRACE(p.ToString() + " " + OpName(op));
        EXPECT_EQ(ConvRouteName(OnednnBackend::ChooseConvRoute(p, op)), ConvRouteName(ExpectedRoute(p, op)));
        for (const char* route : {"native", "batch-as-channels"}) {
          SelectRoute(route);
          EXPECT_EQ(OnednnBackend::ConvImplementation(p, op).find("eigen"), std::string::npos) << route;
        }
        SelectRoute("auto");
      }
    }
  }
}

// CTest runs the kernel and training tests a second time under ONEDNN_MAX_CPU_ISA=AVX2
// (tests/CMakeLists.txt): proof that the cap took, so those runs cover CPUs without bf16
// units whatever CPU runs them, and that the log says so.
TEST(OnednnRuntime, AnAvx2CapLeavesNoBf16Kernels) {
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap == nullptr || std::string(cap) != "AVX2") GTEST_SKIP() << "runs under ONEDNN_MAX_CPU_ISA=AVX2 only";
  EXPECT_FALSE(onednn::NativeBf16Kernels().native) << onednn::NativeBf16Kernels().isa;
  EXPECT_NE(OnednnCpuBackend().ProductPath(MathPrecision::kBf16).find("fp32 kernels on operands rounded to bf16"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace gantry
