// Convolutions on oneDNN's convolution primitives. A transposed convolution needs no
// deconvolution primitive: it arrives here as the backward-data (forward) and forward
// (input gradient) of its adjoint problem, which is what oneDNN's own deconvolution
// runs internally.
#include <functional>
#include <optional>
#include <unordered_map>

#include "common/check.h"
#include "worker/tensor/cpu/operand_rounding.h"
#include "worker/tensor/onednn/onednn_backend.h"
#include "worker/tensor/onednn/onednn_plan.h"

namespace gantry {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using md = dnnl::memory::desc;
using onednn::MakeInput;
using onednn::MakeOutput;
using onednn::OutputMode;
using onednn::Plan;
using onednn::Runtime;
using onednn::Slot;

struct ConvKey {
  ConvProblem p;
  ConvOp op;
  bool operator==(const ConvKey&) const = default;
};

struct ConvKeyHash {
  size_t operator()(const ConvKey& k) const {
    const ConvProblem& p = k.p;
    size_t h = 0;
    for (int64_t v : {p.batch, p.in_channels, p.out_channels, p.in_height, p.in_width, p.out_height, p.out_width,
                      p.kernel, p.stride, p.padding, static_cast<int64_t>(p.precision), static_cast<int64_t>(k.op)}) {
      h = h * 1000003u ^ std::hash<int64_t>{}(v);
    }
    return h;
  }
};

// Operands of kernels that read 16 bits read bf16; everything else is fp32.
dt OperandType(MathPrecision p) { return p == MathPrecision::kBf16 ? dt::bf16 : dt::f32; }

Plan BuildConvPlan(Runtime& rt, const ConvProblem& p, ConvOp op) {
  const dnnl::memory::dims src{p.batch, p.in_channels, p.in_height, p.in_width};
  const dnnl::memory::dims wei{p.out_channels, p.in_channels, p.kernel, p.kernel};
  const dnnl::memory::dims dst{p.batch, p.out_channels, p.out_height, p.out_width};
  const dnnl::memory::dims strides{p.stride, p.stride}, pad_l{p.padding, p.padding};
  const dnnl::memory::dims pad_r{p.padding_bottom(), p.padding_right()};
  const md src_user(src, dt::f32, tag::nchw), wei_user(wei, dt::f32, tag::oihw), dst_user(dst, dt::f32, tag::nchw);
  const dt operand = OperandType(p.precision);
  // format_tag::any everywhere: oneDNN picks the blocked layouts its kernels run
  // fastest on, and the plan reorders the caller's NCHW/OIHW arrays to and from them.
  auto any = [](const dnnl::memory::dims& d, dt t) { return md(d, t, tag::any); };
  const dnnl::primitive_attr attr = onednn::ScratchpadAttr();
  const dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                      any(src, operand), any(wei, operand), any(dst, dt::f32), strides, pad_l,
                                      pad_r),
      attr, rt.engine());
  Plan plan;
  switch (op) {
    case ConvOp::kForward: {
      plan.primitive = dnnl::convolution_forward(fwd);
      plan.inputs = {MakeInput(rt, DNNL_ARG_SRC, src_user, fwd.src_desc(), Slot::kInputA),
                     MakeInput(rt, DNNL_ARG_WEIGHTS, wei_user, fwd.weights_desc(), Slot::kInputB)};
      plan.output = MakeOutput(rt, DNNL_ARG_DST, dst_user, fwd.dst_desc(), OutputMode::kOverwrite);
      plan.scratchpad = dnnl::memory(fwd.scratchpad_desc(), rt.engine(), DNNL_MEMORY_NONE);
      plan.implementation = fwd.impl_info_str();
      break;
    }
    case ConvOp::kBackwardData: {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, any(src, dt::f32),
                                                any(wei, operand), any(dst, operand), strides, pad_l, pad_r),
          attr, rt.engine(), fwd);
      plan.primitive = dnnl::convolution_backward_data(pd);
      plan.inputs = {MakeInput(rt, DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), Slot::kInputA),
                     MakeInput(rt, DNNL_ARG_WEIGHTS, wei_user, pd.weights_desc(), Slot::kInputB)};
      plan.output = MakeOutput(rt, DNNL_ARG_DIFF_SRC, src_user, pd.diff_src_desc(), OutputMode::kOverwrite);
      plan.scratchpad = dnnl::memory(pd.scratchpad_desc(), rt.engine(), DNNL_MEMORY_NONE);
      plan.implementation = pd.impl_info_str();
      break;
    }
    case ConvOp::kBackwardWeights: {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, any(src, operand),
                                                   any(wei, dt::f32), any(dst, operand), strides, pad_l, pad_r),
          attr, rt.engine(), fwd);
      plan.primitive = dnnl::convolution_backward_weights(pd);
      plan.inputs = {MakeInput(rt, DNNL_ARG_SRC, src_user, pd.src_desc(), Slot::kInputA),
                     MakeInput(rt, DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), Slot::kInputB)};
      plan.output =
          MakeOutput(rt, DNNL_ARG_DIFF_WEIGHTS, wei_user, pd.diff_weights_desc(), OutputMode::kAccumulate);
      plan.scratchpad = dnnl::memory(pd.scratchpad_desc(), rt.engine(), DNNL_MEMORY_NONE);
      plan.implementation = pd.impl_info_str();
      break;
    }
  }
  return plan;
}

// This thread's plan for (p, op), built on first use; null where oneDNN rejects the
// problem (the reference runs it then, and the rejection is remembered).
Plan* FindConvPlan(const ConvProblem& p, ConvOp op) {
  thread_local std::unordered_map<ConvKey, std::optional<Plan>, ConvKeyHash> cache;
  const ConvKey key{p, op};
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::optional<Plan> plan;
    try {
      plan = BuildConvPlan(Runtime::ForThisThread(), p, op);
    } catch (const dnnl::error&) {
      plan.reset();
    }
    it = cache.emplace(key, std::move(plan)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// oneDNN has no fp16 kernels here: fp16 problems run as fp32 on operands rounded to fp16
// values, which is the reference definition exactly.
struct Prepared {
  ConvProblem problem;
  const float* a;
  const float* b;
};
Prepared Prepare(const ConvProblem& p, const float* a, int64_t a_count, const float* b, int64_t b_count) {
  if (p.precision != MathPrecision::kFp16) return {p, a, b};
  Runtime& rt = Runtime::ForThisThread();
  auto* ra = static_cast<float*>(rt.Buffer(Slot::kRoundA, static_cast<size_t>(a_count) * sizeof(float)));
  auto* rb = static_cast<float*>(rt.Buffer(Slot::kRoundB, static_cast<size_t>(b_count) * sizeof(float)));
  RoundToPrecision(MathPrecision::kFp16, a_count, a, ra);
  RoundToPrecision(MathPrecision::kFp16, b_count, b, rb);
  ConvProblem fp32 = p;
  fp32.precision = MathPrecision::kFp32;
  return {fp32, ra, rb};
}

}  // namespace

void OnednnBackend::ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) {
  CheckConvProblem(p);
  const Prepared q = Prepare(p, x, p.batch * p.in_image_size(), w, p.weight_size());
  Plan* plan = FindConvPlan(q.problem, ConvOp::kForward);
  if (plan == nullptr) return EigenCpuBackend::ConvForward(p, x, w, y);
  const float* in[] = {q.a, q.b};
  plan->Run(Runtime::ForThisThread(), in, y);
}

void OnednnBackend::ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) {
  CheckConvProblem(p);
  const Prepared q = Prepare(p, dy, p.batch * p.out_image_size(), w, p.weight_size());
  Plan* plan = FindConvPlan(q.problem, ConvOp::kBackwardData);
  if (plan == nullptr) return EigenCpuBackend::ConvBackwardData(p, dy, w, dx);
  const float* in[] = {q.a, q.b};
  plan->Run(Runtime::ForThisThread(), in, dx);
}

void OnednnBackend::ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) {
  CheckConvProblem(p);
  const Prepared q = Prepare(p, x, p.batch * p.in_image_size(), dy, p.batch * p.out_image_size());
  Plan* plan = FindConvPlan(q.problem, ConvOp::kBackwardWeights);
  if (plan == nullptr) return EigenCpuBackend::ConvBackwardWeights(p, x, dy, dw);
  const float* in[] = {q.a, q.b};
  plan->Run(Runtime::ForThisThread(), in, dw);
}

std::string OnednnBackend::ConvImplementation(const ConvProblem& p, ConvOp op) {
  ConvProblem q = p;
  if (q.precision == MathPrecision::kFp16) q.precision = MathPrecision::kFp32;
  Plan* plan = FindConvPlan(q, op);
  return plan != nullptr ? plan->implementation : "eigen reference";
}

}  // namespace gantry
