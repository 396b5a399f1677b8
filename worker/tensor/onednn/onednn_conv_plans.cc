#include "worker/tensor/onednn/onednn_conv_plans.h"

#include <functional>
#include <optional>
#include <unordered_map>

namespace gantry::onednn {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using md = dnnl::memory::desc;
using dims = dnnl::memory::dims;

struct ConvKey {
  ConvProblem p;
  ConvOp op;
  ConvAlgorithm algorithm;
  bool operator==(const ConvKey&) const = default;
};

struct ConvKeyHash {
  size_t operator()(const ConvKey& k) const {
    const ConvProblem& p = k.p;
    size_t h = 0;
    for (int64_t v : {p.batch, p.in_channels, p.out_channels, p.in_height, p.in_width, p.out_height, p.out_width,
                      p.kernel, p.stride, p.padding, static_cast<int64_t>(p.precision), static_cast<int64_t>(k.op),
                      static_cast<int64_t>(k.algorithm)}) {
      h = h * 1000003u ^ std::hash<int64_t>{}(v);
    }
    return h;
  }
};

// format_tag::any everywhere: oneDNN picks the layouts its kernels run fastest on, and
// the plan reorders the caller's arrays to and from them.
md Any(const dims& d, dt t) { return md(d, t, tag::any); }

dt OperandType(const ConvProblem& p) { return p.precision == MathPrecision::kBf16 ? dt::bf16 : dt::f32; }

template <typename PrimitiveDesc>
void Finish(Runtime& rt, const PrimitiveDesc& pd, Plan& plan) {
  plan.scratchpad = dnnl::memory(pd.scratchpad_desc(), rt.engine(), DNNL_MEMORY_NONE);
  plan.implementation = pd.impl_info_str();
}

Plan BuildDirect(Runtime& rt, const ConvProblem& p, ConvOp op) {
  const dims src{p.batch, p.in_channels, p.in_height, p.in_width};
  const dims wei{p.out_channels, p.in_channels, p.kernel, p.kernel};
  const dims dst{p.batch, p.out_channels, p.out_height, p.out_width};
  const dims strides{p.stride, p.stride}, pad_l{p.padding, p.padding}, pad_r{p.padding_bottom(), p.padding_right()};
  const md src_user(src, dt::f32, tag::nchw), wei_user(wei, dt::f32, tag::oihw), dst_user(dst, dt::f32, tag::nchw);
  const dt operand = OperandType(p);
  const dnnl::primitive_attr attr = ScratchpadAttr();
  const dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                      Any(src, operand), Any(wei, operand), Any(dst, dt::f32), strides, pad_l,
                                      pad_r),
      attr, rt.engine());
  Plan plan;
  if (op == ConvOp::kForward) {
    plan.primitive = dnnl::convolution_forward(fwd);
    plan.inputs = {MakeInput(rt, DNNL_ARG_SRC, src_user, fwd.src_desc(), Slot::kInputA),
                   MakeInput(rt, DNNL_ARG_WEIGHTS, wei_user, fwd.weights_desc(), Slot::kInputB)};
    plan.output = MakeOutput(rt, DNNL_ARG_DST, dst_user, fwd.dst_desc(), OutputMode::kOverwrite);
    Finish(rt, fwd, plan);
  } else if (op == ConvOp::kBackwardData) {
    const dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, Any(src, dt::f32),
                                              Any(wei, operand), Any(dst, operand), strides, pad_l, pad_r),
        attr, rt.engine(), fwd);
    plan.primitive = dnnl::convolution_backward_data(pd);
    plan.inputs = {MakeInput(rt, DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), Slot::kInputA),
                   MakeInput(rt, DNNL_ARG_WEIGHTS, wei_user, pd.weights_desc(), Slot::kInputB)};
    plan.output = MakeOutput(rt, DNNL_ARG_DIFF_SRC, src_user, pd.diff_src_desc(), OutputMode::kOverwrite);
    Finish(rt, pd, plan);
  } else {
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, Any(src, operand),
                                                 Any(wei, dt::f32), Any(dst, operand), strides, pad_l, pad_r),
        attr, rt.engine(), fwd);
    plan.primitive = dnnl::convolution_backward_weights(pd);
    plan.inputs = {MakeInput(rt, DNNL_ARG_SRC, src_user, pd.src_desc(), Slot::kInputA),
                   MakeInput(rt, DNNL_ARG_DIFF_DST, dst_user, pd.diff_dst_desc(), Slot::kInputB)};
    plan.output = MakeOutput(rt, DNNL_ARG_DIFF_WEIGHTS, wei_user, pd.diff_weights_desc(), OutputMode::kAccumulate);
    Finish(rt, pd, plan);
  }
  return plan;
}

// See ConvAlgorithm::kBatchAsChannels. Stride s becomes a dilation of the dy "kernel"
// (oneDNN counts dilation as the gap, s - 1); the padding stays, so the output is k x k.
Plan BuildBatchAsChannels(Runtime& rt, const ConvProblem& p) {
  const int64_t hw = p.in_height * p.in_width, ohw = p.out_height * p.out_width, kk = p.kernel * p.kernel;
  const md x_user({p.in_channels, p.batch, p.in_height, p.in_width}, dt::f32,
                  dims{hw, p.in_channels * hw, p.in_width, 1});
  const md dy_user({p.out_channels, p.batch, p.out_height, p.out_width}, dt::f32,
                   dims{ohw, p.out_channels * ohw, p.out_width, 1});
  const md dw_user({p.in_channels, p.out_channels, p.kernel, p.kernel}, dt::f32,
                   dims{kk, p.in_channels * kk, p.kernel, 1});
  const dt operand = OperandType(p);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          Any(x_user.dims(), operand), Any(dy_user.dims(), operand), Any(dw_user.dims(), dt::f32), dims{1, 1},
          dims{p.stride - 1, p.stride - 1}, dims{p.padding, p.padding}, dims{p.padding_bottom(), p.padding_right()}),
      ScratchpadAttr(), rt.engine());
  Plan plan;
  plan.primitive = dnnl::convolution_forward(pd);
  plan.inputs = {MakeInput(rt, DNNL_ARG_SRC, x_user, pd.src_desc(), Slot::kInputA),
                 MakeInput(rt, DNNL_ARG_WEIGHTS, dy_user, pd.weights_desc(), Slot::kInputB)};
  plan.output = MakeOutput(rt, DNNL_ARG_DST, dw_user, pd.dst_desc(), OutputMode::kAccumulate);
  Finish(rt, pd, plan);
  plan.implementation += " (batch as channels)";
  return plan;
}

}  // namespace

Plan* FindConvPlan(const ConvProblem& p, ConvOp op, ConvAlgorithm algorithm) {
  if (op != ConvOp::kBackwardWeights) algorithm = ConvAlgorithm::kDirect;
  thread_local std::unordered_map<ConvKey, std::optional<Plan>, ConvKeyHash> cache;
  const ConvKey key{p, op, algorithm};
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::optional<Plan> plan;
    try {
      Runtime& rt = Runtime::ForThisThread();
      plan = algorithm == ConvAlgorithm::kDirect ? BuildDirect(rt, p, op) : BuildBatchAsChannels(rt, p);
    } catch (const dnnl::error&) {
      plan.reset();
    }
    it = cache.emplace(key, std::move(plan)).first;
  }
  return it->second ? &*it->second : nullptr;
}

}  // namespace gantry::onednn
