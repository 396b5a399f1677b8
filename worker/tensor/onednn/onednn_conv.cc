// The oneDNN backend's convolutions: each op goes down the route ChooseConvRoute picks
// (onednn_conv_route.cc) to a cached plan (onednn_conv_plans.cc) or to the reference. A
// transposed convolution needs no deconvolution primitive: it arrives here as the
// backward-data (its forward) and forward (its input gradient) of its adjoint problem,
// which is what oneDNN's own deconvolution runs internally.
#include "common/check.h"
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

// Runs `op` of `p` on oneDNN along `route`; false where oneDNN has no plan for it (the
// caller then runs the reference).
bool RunOnOnednn(ConvRoute route, const ConvProblem& p, ConvOp op, const float* a, int64_t a_count,
                 const float* b, int64_t b_count, float* out) {
  if (route == ConvRoute::kReference) return false;
  const ConvProblem kernel = KernelProblem(route, p);
  Plan* plan = onednn::FindConvPlan(kernel, op, AlgorithmOf(route));
  if (plan == nullptr) return false;
  Runtime& rt = Runtime::ForThisThread();
  if (kernel.precision != p.precision) {
    auto* ra = static_cast<float*>(rt.Buffer(Slot::kStagingA, static_cast<size_t>(a_count) * sizeof(float)));
    auto* rb = static_cast<float*>(rt.Buffer(Slot::kStagingB, static_cast<size_t>(b_count) * sizeof(float)));
    RoundToPrecision(p.precision, a_count, a, ra);
    RoundToPrecision(p.precision, b_count, b, rb);
    a = ra;
    b = rb;
  }
  const void* in[] = {a, b};
  plan->Run(rt, in, out);
  return true;
}

}  // namespace

void OnednnBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  const ConvRoute route = ChooseConvRoute(p, ConvOp::kForward);
  if (!RunOnOnednn(route, p, ConvOp::kForward, x, p.batch * p.in_image_size(), w, p.weight_size(), y)) {
    EigenCpuBackend::ConvForward(p, x, w, y);
  }
}

void OnednnBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  const ConvRoute route = ChooseConvRoute(p, ConvOp::kBackwardData);
  if (!RunOnOnednn(route, p, ConvOp::kBackwardData, dy, p.batch * p.out_image_size(), w, p.weight_size(), dx)) {
    EigenCpuBackend::ConvBackwardData(p, dy, w, dx);
  }
}

void OnednnBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  const ConvRoute route = ChooseConvRoute(p, ConvOp::kBackwardWeights);
  if (!RunOnOnednn(route, p, ConvOp::kBackwardWeights, x, p.batch * p.in_image_size(), dy,
                   p.batch * p.out_image_size(), dw)) {
    EigenCpuBackend::ConvBackwardWeights(p, x, dy, dw);
  }
}

std::string OnednnBackend::ConvImplementation(const ConvProblem& p, ConvOp op) {
  const ConvRoute route = ChooseConvRoute(p, op);
  Plan* plan = route == ConvRoute::kReference ? nullptr
                                              : onednn::FindConvPlan(KernelProblem(route, p), op, AlgorithmOf(route));
  const std::string kernel = plan != nullptr ? plan->implementation : "eigen reference";
  return kernel + " [" + std::string(ConvRouteName(route)) + "]";
}

}  // namespace gantry
