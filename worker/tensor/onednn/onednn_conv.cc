// The oneDNN backend's convolutions: each op goes down the route ChooseConvRoute picks
// (onednn_conv_route.cc) to a cached plan (onednn_conv_plans.cc) or to the reference. A
// transposed convolution needs no deconvolution primitive: it arrives here as the
// backward-data (its forward) and forward (its input gradient) of its adjoint problem,
// which is what oneDNN's own deconvolution runs internally.
#include <algorithm>

#include "common/check.h"
#include "worker/tensor/cpu/lowered_conv.h"
#include "worker/tensor/cpu/operand_rounding.h"
#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_conv_plans.h"

namespace gantry {
namespace {

using onednn::ConvAlgorithm;
using onednn::Plan;
using onednn::Runtime;
using onednn::Slot;

// The problem a route hands to oneDNN: bf16 kernels for bf16 (unless the route is
// kRoundedFp32 or the CPU has none), fp32 kernels otherwise; fp16 always (oneDNN 2.6 has
// no x86 fp16 kernels), bf16 without bf16 kernels and kRoundedFp32 round the operands
// first, which is the reference semantics exactly.
ConvProblem KernelProblem(ConvRoute route, ConvProblem p) {
  if (route == ConvRoute::kRoundedFp32 || onednn::RunsOnFp32Kernels(p.precision)) p.precision = MathPrecision::kFp32;
  return p;
}

ConvAlgorithm AlgorithmOf(ConvRoute route) {
  return route == ConvRoute::kBatchAsChannels ? ConvAlgorithm::kBatchAsChannels : ConvAlgorithm::kDirect;
}

// `src` rounded to `precision` in this thread's `slot`, or `src` itself where it holds
// values of that precision already (a saved input widened from bf16).
const float* RoundedStaging(Runtime& rt, Slot slot, MathPrecision precision, int64_t count, const float* src) {
  if (AlreadyAtPrecision(precision, count, src)) return src;
  auto* rounded = static_cast<float*>(rt.Buffer(slot, static_cast<size_t>(count) * sizeof(float)));
  RoundToPrecision(precision, count, src, rounded);
  return rounded;
}

// Runs `op` of `p` on oneDNN along `route`; false where oneDNN has no plan for it (the
// caller then runs the reference).
bool RunOnOnednn(ConvRoute route, const ConvProblem& p, ConvOp op, const float* a, int64_t a_count,
                 const float* b, int64_t b_count, float* out) {
  if (route == ConvRoute::kReference || route == ConvRoute::kLowered) return false;
  const ConvProblem kernel = KernelProblem(route, p);
  Plan* plan = onednn::FindConvPlan(kernel, op, AlgorithmOf(route));
  if (plan == nullptr) return false;
  Runtime& rt = Runtime::ForThisThread();
  if (kernel.precision != p.precision) {
    a = RoundedStaging(rt, Slot::kStagingA, p.precision, a_count, a);
    b = RoundedStaging(rt, Slot::kStagingB, p.precision, b_count, b);
  }
  const void* in[] = {a, b};
  plan->Run(rt, in, out);
  return true;
}

// The lowered route's chunks: samples enough for a GEMM about this many columns wide (the
// whole batch of a weight-bound problem, the route's main use, so its GEMM reads the
// weights once; one sample of a large image, whose columns then stay in cache), and a
// column matrix of at most 16 Mi floats (64 MB).
constexpr int64_t kLoweredTargetColumns = 1024;
constexpr int64_t kLoweredMaxColumnFloats = int64_t{16} << 20;

int64_t LoweredChunk(const ConvProblem& p) {
  const int64_t wanted = kLoweredTargetColumns / (p.out_height * p.out_width);
  const int64_t fit = kLoweredMaxColumnFloats / ColumnFloatsPerSample(p);
  return std::clamp<int64_t>(std::min(wanted, fit), 1, p.batch);
}

// Runs `op` of `p` along kLowered: operands a (a_count floats) and b rounded to the
// precision into staging buffers (fp32 and already-rounded operands are used in place), then the lowered
// convolution on oneDNN's fp32 matmul.
void RunLowered(OnednnBackend& backend, const ConvProblem& p, ConvOp op, const float* a, int64_t a_count,
                const float* b, int64_t b_count, float* out) {
  if (p.precision != MathPrecision::kFp32) {
    Runtime& rt = Runtime::ForThisThread();
    a = RoundedStaging(rt, Slot::kStagingA, p.precision, a_count, a);
    b = RoundedStaging(rt, Slot::kStagingB, p.precision, b_count, b);
  }
  // The matmul at fp32 never touches the staging slots, so the rounded operands stay put.
  // Weight gradients of weight-bound problems are rank-k updates of a large dW (k = the
  // batch's output pixels); up to k = 32 Eigen streams them faster (4x512x4x4 ->
  // 1024x2x2, k = 16: 5.5 against 8.7 ms; k = 4: 4.1 against 6.1 ms; k = 64: 13.9 against
  // 13.2 ms).
  constexpr int64_t kEigenMaxDepth = 32;
  const LoweringGemm gemm = [&backend](bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                       const float* ga, int64_t lda, const float* gb, int64_t ldb, float beta,
                                       float* c, int64_t ldc) {
    if (k <= kEigenMaxDepth) {
      backend.EigenCpuBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, ga, lda, gb, ldb, beta,
                                    c, ldc);
      return;
    }
    backend.OnednnBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, ga, lda, gb, ldb, beta, c,
                                ldc);
  };
  const int64_t chunk = LoweredChunk(p);
  switch (op) {
    case ConvOp::kForward: return LoweredConvForward(p, chunk, a, b, out, gemm);
    case ConvOp::kBackwardData: return LoweredConvBackwardData(p, chunk, a, b, out, gemm);
    case ConvOp::kBackwardWeights: return LoweredConvBackwardWeights(p, chunk, a, b, out, gemm);
  }
}

}  // namespace

void OnednnBackend::RunConv(const ConvProblem& p, ConvOp op, const float* a, int64_t a_count, const float* b,
                            int64_t b_count, float* out) {
  CheckConvProblem(p);
  const ConvRoute route = ChooseConvRoute(p, op);
  if (route == ConvRoute::kLowered) return RunLowered(*this, p, op, a, a_count, b, b_count, out);
  if (RunOnOnednn(route, p, op, a, a_count, b, b_count, out)) return;
  switch (op) {
    case ConvOp::kForward: return EigenCpuBackend::ConvForward(p, a, b, out);
    case ConvOp::kBackwardData: return EigenCpuBackend::ConvBackwardData(p, a, b, out);
    case ConvOp::kBackwardWeights: return EigenCpuBackend::ConvBackwardWeights(p, a, b, out);
  }
}

void OnednnBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  RunConv(p, ConvOp::kForward, x, p.batch * p.in_image_size(), w, p.weight_size(), y);
}

void OnednnBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  RunConv(p, ConvOp::kBackwardData, dy, p.batch * p.out_image_size(), w, p.weight_size(), dx);
}

void OnednnBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  RunConv(p, ConvOp::kBackwardWeights, x, p.batch * p.in_image_size(), dy, p.batch * p.out_image_size(), dw);
}

std::string OnednnBackend::ConvImplementation(const ConvProblem& p, ConvOp op) {
  const ConvRoute route = ChooseConvRoute(p, op);
  if (route == ConvRoute::kLowered) return "im2col + oneDNN matmul [" + std::string(ConvRouteName(route)) + "]";
  Plan* plan = route == ConvRoute::kReference ? nullptr
                                              : onednn::FindConvPlan(KernelProblem(route, p), op, AlgorithmOf(route));
  const std::string kernel = plan != nullptr ? plan->implementation : "eigen reference";
  return kernel + " [" + std::string(ConvRouteName(route)) + "]";
}

}  // namespace gantry
