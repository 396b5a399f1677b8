// What is oneDNN's own in its convolutions: the routes (each forced route passes the op
// suite's convolution rows, where the suite itself runs the automatic choice), the route
// choice per problem and CPU, per-thread plans shared by threads, and the AVX2 cap.
// Whether the convolutions match the reference on the automatic route is the op suite's
// (tests/tensor/backend_ops_test.cc).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/backend_ops/op_case.h"
#include "tests/testing/backend_ops/op_run.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cpu/cpu_backend.h"
#if GANTRY_HAVE_ONEDNN
#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_runtime.h"
#endif

namespace gantry {
namespace {

using testing::RandomTensor;

ConvProblem Problem(int64_t n, int64_t c, int64_t o, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
  return ConvProblem{.batch = n, .in_channels = c, .out_channels = o, .in_height = h, .in_width = w,
                     .out_height = ConvOutSize(h, k, s, p), .out_width = ConvOutSize(w, k, s, p),
                     .kernel = k, .stride = s, .padding = p};
}

// The DCGAN's convolutions (G deconv1's, deconv2's and deconv3's adjoints; D conv2 and
// conv1) at batch `n`.
std::vector<ConvProblem> DcganProblems(int64_t n) {
  return {Problem(n, 128, 256, 7, 7, 5, 1, 2), Problem(n, 64, 128, 14, 14, 5, 2, 2),
          Problem(n, 1, 64, 28, 28, 5, 2, 2)};
}

const char* OpName(ConvOp op) {
  return op == ConvOp::kForward ? "forward" : op == ConvOp::kBackwardData ? "backward-data" : "backward-weights";
}

// The routes a test forces (so every route is checked on every shape, not only where the
// choice sends it); "auto" is the measured choice.
std::vector<std::string> ForcedRoutes() {
  return {"native", "rounded-fp32", "batch-as-channels", "lowered", "one-output", "winograd"};
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

// Every forced route passes the op suite's rows of the three convolution passes at every
// precision, on all of the suite's problems (its bounds and references; the suite runs
// the automatic route itself).
TEST(OnednnConvTest, EveryForcedRoutePassesTheSuitesConvolutionRows) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (const std::string& route : ForcedRoutes()) {
    SCOPED_TRACE("route " + route);
    SelectRoute(route);
    for (const testing::OpCase& row : testing::OpCases()) {
      if (row.op == "ConvForward" || row.op == "ConvBackwardData" || row.op == "ConvBackwardWeights") {
        testing::RunOpCase(*onednn, row);
      }
    }
  }
  SelectRoute("auto");
}

// Ranks may run as threads sharing the backend: each thread has its own plans and
// scratch, so concurrent calls on the same problem give the single-thread result.
TEST(OnednnConvTest, ThreadsShareTheBackendSafely) {
  GANTRY_ONEDNN_OR_SKIP(onednn);
  for (MathPrecision prec : {MathPrecision::kFp32, MathPrecision::kBf16}) {
    ConvProblem p = DcganProblems(3)[1];
    p.precision = prec;
    const Tensor x = RandomTensor(Shape{p.batch, p.in_channels, p.in_height, p.in_width}, 1);
    const Tensor dy = RandomTensor(Shape{p.batch, p.out_channels, p.out_height, p.out_width}, 3);
    const Tensor dw0 = RandomTensor(Shape{p.out_channels, p.in_channels, p.kernel, p.kernel}, 4);
    auto weight_gradient = [&] {
      Tensor dw = dw0.Clone();
      onednn->ConvBackwardWeights(p, x.data(), dy.data(), dw.data());
      return dw;
    };
    const Tensor expected = weight_gradient();
    std::vector<Tensor> results(3);
    std::vector<std::thread> threads;
    for (Tensor& r : results) {
      threads.emplace_back([&] {
        for (int i = 0; i < 3; ++i) r = weight_gradient();
      });
    }
    for (std::thread& t : threads) t.join();
    for (const Tensor& r : results) {
      for (int64_t i = 0; i < r.numel(); ++i) ASSERT_EQ(r.at(i), expected.at(i)) << i;
    }
  }
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
// on AVX512-BF16 kernels without AMX the few-input-channel backward-data goes lowered as
// on fp32 kernels; bf16 backward-weights goes batch-as-channels on bf16 kernels where the
// output has at most 4 x batch pixels (and at most 7x7 of them without AMX) or one input
// channel; bf16 without bf16
// kernels runs fp32 kernels on rounded operands. Before all that, on fp32 kernels, one
// output channel goes to the direct kernels; after lowered, fp32 stride-1 4x4 problems
// with 64 or more channels on each side go Winograd where the 3x3 tiles of the plane the
// pass writes (dx for backward-data, y otherwise) have at least 75% of their area inside
// it, and batch x those tiles times the narrower channel count reach 48 Ki for
// backward-data and 6 Ki for the others. First of all, a kernel over the whole unpadded
// input (one output pixel: a matrix product over the batch) goes lowered.
ConvRoute ExpectedRoute(const ConvProblem& p, ConvOp op) {
  if (p.padding == 0 && p.kernel == p.in_height && p.kernel == p.in_width) return ConvRoute::kLowered;
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
  const bool avx512_bf16 = p.precision == MathPrecision::kBf16 && !fp32_kernels && !onednn::HasAmxBf16Kernels();
  if (avx512_bf16 && p.in_channels < 8 && op == ConvOp::kBackwardData && o >= 32) return ConvRoute::kLowered;
  if (winograd) return ConvRoute::kWinograd;
  if (p.in_channels == 1 && op == ConvOp::kBackwardData) return ConvRoute::kReference;
  if (p.in_channels == 1 && op == ConvOp::kBackwardWeights && fp32_kernels && !onednn::HasAvx512Fp32Kernels()) {
    return ConvRoute::kReference;
  }
  if (p.precision != MathPrecision::kBf16) return ConvRoute::kNative;
  if (!onednn::NativeBf16Kernels().native) return ConvRoute::kRoundedFp32;
  const int64_t pixels = p.out_height * p.out_width;
  const bool batch_as_channels =
      p.in_channels == 1 || (pixels <= 4 * p.batch && (onednn::HasAmxBf16Kernels() || pixels <= 49));
  return op == ConvOp::kBackwardWeights && batch_as_channels ? ConvRoute::kBatchAsChannels : ConvRoute::kNative;
}

// Every op of the DCGAN's problems (at their training batch, 64) and of the Pix2Pix U-Net's
// (a wide outer layer and a weight-bound inner one, batch 4) has oneDNN kernels on the
// native and batch-as-channels routes (no silent fallback to the reference, on any x86-64
// CPU), and the automatic choice is the one ExpectedRoute gives for this CPU.
TEST(OnednnConvTest, DcganAndPix2pixProblemsRunWhereTheRoutesSay) {
  SCOPED_TRACE("bf16 kernels: " + onednn::NativeBf16Kernels().isa);
  std::vector<ConvProblem> problems = DcganProblems(64);
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
  problems.push_back(Problem(64, 512, 1, 4, 4, 4, 1, 0));     // the image DCGAN's logit: a kernel over the input
  problems.push_back(Problem(64, 512, 100, 4, 4, 4, 1, 0));   // the adjoint of its generator's first layer
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

// CTest runs the CPU-dependent tests a second time under ONEDNN_MAX_CPU_ISA=AVX2
// (tests/CMakeLists.txt): proof that the cap took, so those runs cover CPUs without bf16
// units whatever CPU runs them, and that the log says so. Tests named CappedToAvx2.* run
// only in that rerun (the plain run filters them out).
TEST(CappedToAvx2, NoBf16KernelsAreLeft) {
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  ASSERT_TRUE(cap != nullptr && std::string(cap) == "AVX2") << "run by the *_capped_to_avx2 CTest only";
  EXPECT_FALSE(onednn::NativeBf16Kernels().native) << onednn::NativeBf16Kernels().isa;
  EXPECT_NE(OnednnCpuBackend().ProductPath(MathPrecision::kBf16).find("fp32 kernels on operands rounded to bf16"),
            std::string::npos);
}
#endif

}  // namespace
}  // namespace gantry
