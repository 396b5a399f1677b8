// The oneDNN backend's convolutions: each op goes down the route ChooseConvRoute picks
// (onednn_conv_route.cc) to a cached plan (onednn_conv_plans.cc) or to the reference. A
// transposed convolution needs no deconvolution primitive: it arrives here as the
// backward-data (its forward) and forward (its input gradient) of its adjoint problem,
// which is what oneDNN's own deconvolution runs internally.
#include <algorithm>
#include <span>
#include <tuple>
#include <utility>

#include "common/check.h"
#include "worker/tensor/cpu/lowered_conv.h"
#include "worker/tensor/cpu/one_output_conv.h"
#include "worker/tensor/cpu/operand_rounding.h"
#include "worker/tensor/cpu/winograd_conv.h"
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

// The routes that run our own kernels (on oneDNN's matmul at most), not its convolutions.
bool OffOnednnKernels(ConvRoute route) {
  return route == ConvRoute::kReference || route == ConvRoute::kLowered || route == ConvRoute::kOneOutput ||
         route == ConvRoute::kWinograd;
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

// `a` and `b` rounded to p's precision into the staging slots (fp32 or already-rounded
// operands: themselves).
std::pair<const float*, const float*> Rounded(const ConvProblem& p, const float* a, int64_t a_count, const float* b,
                                              int64_t b_count) {
  if (p.precision == MathPrecision::kFp32) return {a, b};
  Runtime& rt = Runtime::ForThisThread();
  return {RoundedStaging(rt, Slot::kStagingA, p.precision, a_count, a),
          RoundedStaging(rt, Slot::kStagingB, p.precision, b_count, b)};
}

// Runs `op` of `p` on oneDNN along `route`; false where oneDNN has no plan for it (the
// caller then runs the reference).
bool RunOnOnednn(ConvRoute route, const ConvProblem& p, ConvOp op, const float* a, int64_t a_count,
                 const float* b, int64_t b_count, float* out) {
  if (OffOnednnKernels(route)) return false;
  const ConvProblem kernel = KernelProblem(route, p);
  Plan* plan = onednn::FindConvPlan(kernel, op, AlgorithmOf(route));
  if (plan == nullptr) return false;
  if (kernel.precision != p.precision) std::tie(a, b) = Rounded(p, a, a_count, b, b_count);
  const void* in[] = {a, b};
  plan->Run(Runtime::ForThisThread(), in, out);
  return true;
}

// The plan `op` of `p` runs on where its route is oneDNN's kernels on the caller's arrays
// (no operand rounded into staging first), so that an input two plans read can be moved to
// their layout once; else null.
Plan* UnstagedPlan(const ConvProblem& p, ConvOp op) {
  const ConvRoute route = OnednnBackend::ChooseConvRoute(p, op);
  if (OffOnednnKernels(route)) return nullptr;
  const ConvProblem kernel = KernelProblem(route, p);
  if (kernel.precision != p.precision) return nullptr;
  return onednn::FindConvPlan(kernel, op, AlgorithmOf(route));
}

// Runs `first` then `second` (inputs in FindConvPlan's order), moving the input they
// share (first_in[shared_first] == second_in[shared_second]) to their layout once where
// both want the same one.
void RunSharingInput(Plan& first, std::span<const void* const> first_in, size_t shared_first, float* first_out,
                     Plan& second, std::span<const void* const> second_in, size_t shared_second,
                     float* second_out) {
  Runtime& rt = Runtime::ForThisThread();
  onednn::SharedInput shared;
  shared.index = shared_first;
  first.Run(rt, first_in, first_out, &shared);
  shared.index = shared_second;
  second.Run(rt, second_in, second_out, &shared);
}

// Runs `op` of `p` along kOneOutput on operands rounded to the precision.
void RunOneOutput(const ConvProblem& p, ConvOp op, const float* a, int64_t a_count, const float* b, int64_t b_count,
                  float* out) {
  const auto [ra, rb] = Rounded(p, a, a_count, b, b_count);
  switch (op) {
    case ConvOp::kForward: return OneOutputConvForward(p, ra, rb, out);
    case ConvOp::kBackwardData: return OneOutputConvBackwardData(p, ra, rb, out);
    case ConvOp::kBackwardWeights: return OneOutputConvBackwardWeights(p, ra, rb, out);
  }
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

// The GEMM the lowered and Winograd routes hand their products to: oneDNN's fp32 matmul,
// or Eigen's for shallow ones. Weight gradients of weight-bound problems are rank-k
// updates of a large dW (k = the batch's output pixels); up to k = 32 Eigen streams them
// faster (4x512x4x4 -> 1024x2x2, k = 16: 5.5 against 8.7 ms; k = 4: 4.1 against 6.1 ms;
// k = 64: 13.9 against 13.2 ms).
LoweringGemm Fp32Gemm(OnednnBackend& backend) {
  constexpr int64_t kEigenMaxDepth = 32;
  return [&backend](bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* ga,
                    int64_t lda, const float* gb, int64_t ldb, float beta, float* c, int64_t ldc) {
    if (k <= kEigenMaxDepth) {
      backend.EigenCpuBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, ga, lda, gb, ldb, beta,
                                    c, ldc);
      return;
    }
    backend.OnednnBackend::Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, ga, lda, gb, ldb, beta, c,
                                ldc);
  };
}

// Runs `op` of `p` along kLowered: operands a (a_count floats) and b rounded to the
// precision into staging buffers (fp32 and already-rounded operands are used in place),
// then the lowered convolution on oneDNN's fp32 matmul.
void RunLowered(OnednnBackend& backend, const ConvProblem& p, ConvOp op, const float* a, int64_t a_count,
                const float* b, int64_t b_count, float* out) {
  std::tie(a, b) = Rounded(p, a, a_count, b, b_count);
  // The matmul at fp32 never touches the staging slots, so the rounded operands stay put.
  const LoweringGemm gemm = Fp32Gemm(backend);
  const int64_t chunk = LoweredChunk(p);
  switch (op) {
    case ConvOp::kForward: return LoweredConvForward(p, chunk, a, b, out, gemm);
    case ConvOp::kBackwardData: return LoweredConvBackwardData(p, chunk, a, b, out, gemm);
    case ConvOp::kBackwardWeights: return LoweredConvBackwardWeights(p, chunk, a, b, out, gemm);
  }
}

// Runs `op` of an fp32 `p` along kWinograd.
void RunWinograd(OnednnBackend& backend, const ConvProblem& p, ConvOp op, const float* a, const float* b,
                 float* out) {
  const LoweringGemm gemm = Fp32Gemm(backend);
  switch (op) {
    case ConvOp::kForward: return WinogradConvForward(p, a, b, out, gemm);
    case ConvOp::kBackwardData: return WinogradConvBackwardData(p, a, b, out, gemm);
    case ConvOp::kBackwardWeights: return WinogradConvBackwardWeights(p, a, b, out, gemm);
  }
}

}  // namespace

void OnednnBackend::RunConv(const ConvProblem& p, ConvOp op, const float* a, int64_t a_count, const float* b,
                            int64_t b_count, float* out) {
  CheckConvProblem(p);
  const ConvRoute route = ChooseConvRoute(p, op);
  if (route == ConvRoute::kLowered) return RunLowered(*this, p, op, a, a_count, b, b_count, out);
  if (route == ConvRoute::kOneOutput) return RunOneOutput(p, op, a, a_count, b, b_count, out);
  if (route == ConvRoute::kWinograd) return RunWinograd(*this, p, op, a, b, out);
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

void OnednnBackend::ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                                 float* dw) {
  CheckConvProblem(p);
  Plan* weights = UnstagedPlan(p, ConvOp::kBackwardWeights);
  Plan* data = UnstagedPlan(p, ConvOp::kBackwardData);
  if (weights == nullptr || data == nullptr) return EigenCpuBackend::ConvBackward(p, x, dy, w, dx, dw);
  const void* weights_in[] = {x, dy};
  const void* data_in[] = {dy, w};
  RunSharingInput(*weights, weights_in, 1, dw, *data, data_in, 0, dx);
}

void OnednnBackend::ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w,
                                          float* dx, float* dw) {
  CheckConvProblem(p);
  Plan* weights = UnstagedPlan(p, ConvOp::kBackwardWeights);
  Plan* forward = UnstagedPlan(p, ConvOp::kForward);
  if (weights == nullptr || forward == nullptr) return EigenCpuBackend::ConvTransposeBackward(p, g, x, w, dx, dw);
  const void* weights_in[] = {g, x};
  const void* forward_in[] = {g, w};
  RunSharingInput(*weights, weights_in, 0, dw, *forward, forward_in, 0, dx);
}

std::string OnednnBackend::ConvImplementation(const ConvProblem& p, ConvOp op) {
  const ConvRoute route = ChooseConvRoute(p, op);
  if (route == ConvRoute::kLowered) return "im2col + oneDNN matmul [" + std::string(ConvRouteName(route)) + "]";
  if (route == ConvRoute::kOneOutput) return "direct one-output-channel kernel [" + std::string(ConvRouteName(route)) + "]";
  if (route == ConvRoute::kWinograd) return "Winograd F(3x3,4x4) + oneDNN matmul [" + std::string(ConvRouteName(route)) + "]";
  Plan* plan = route == ConvRoute::kReference ? nullptr
                                              : onednn::FindConvPlan(KernelProblem(route, p), op, AlgorithmOf(route));
  const std::string kernel = plan != nullptr ? plan->implementation : "eigen reference";
  return kernel + " [" + std::string(ConvRouteName(route)) + "]";
}

}  // namespace gantry
