#include "worker/tensor/onednn/onednn_plan.h"

#include <unordered_map>

namespace gantry::onednn {
namespace {

void* Bindable(const void* p) { return const_cast<void*>(p); }  // oneDNN handles are non-const

}  // namespace

dnnl::primitive_attr ScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

Operand MakeInput(Runtime& rt, int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
                  Slot slot) {
  Operand op;
  op.arg = arg;
  op.slot = slot;
  op.user = dnnl::memory(user_md, rt.engine(), DNNL_MEMORY_NONE);
  if (user_md == inner_md) {
    op.inner = op.user;
    return op;
  }
  op.inner = dnnl::memory(inner_md, rt.engine(), DNNL_MEMORY_NONE);
  op.move = dnnl::reorder(dnnl::reorder::primitive_desc(rt.engine(), user_md, rt.engine(), inner_md));
  return op;
}

Operand MakeOutput(Runtime& rt, int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
                   OutputMode mode) {
  Operand op;
  op.arg = arg;
  op.slot = Slot::kOutput;
  op.user = dnnl::memory(user_md, rt.engine(), DNNL_MEMORY_NONE);
  if (user_md == inner_md && mode == OutputMode::kOverwrite) {
    op.inner = op.user;
    return op;
  }
  op.inner = dnnl::memory(inner_md, rt.engine(), DNNL_MEMORY_NONE);
  dnnl::primitive_attr attr;
  if (mode == OutputMode::kAccumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  op.move = dnnl::reorder(dnnl::reorder::primitive_desc(rt.engine(), inner_md, rt.engine(), user_md, attr));
  return op;
}

void Plan::Run(Runtime& rt, std::span<const void* const> in, float* out, SharedInput* shared) {
  dnnl::stream& s = rt.stream();
  std::unordered_map<int, dnnl::memory> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Operand& op = inputs[i];
    op.user.set_data_handle(Bindable(in[i]));
    if (op.move) {
      const dnnl::memory::desc inner = op.inner.get_desc();
      if (shared != nullptr && shared->index == i && shared->data != nullptr && shared->inner == inner) {
        op.inner.set_data_handle(shared->data);  // moved by an earlier plan of this call
      } else if (shared != nullptr && shared->index == i) {
        shared->data = rt.Buffer(Slot::kShared, inner.get_size());
        shared->inner = inner;
        op.inner.set_data_handle(shared->data);
        op.move->execute(s, op.user, op.inner);
      } else {
        op.inner.set_data_handle(rt.Buffer(op.slot, inner.get_size()));
        op.move->execute(s, op.user, op.inner);
      }
    }
    args.emplace(op.arg, op.inner);
  }
  output.user.set_data_handle(out);
  if (output.move) output.inner.set_data_handle(rt.Buffer(output.slot, output.inner.get_desc().get_size()));
  args.emplace(output.arg, output.inner);
  if (scratchpad) {
    scratchpad.set_data_handle(rt.Buffer(Slot::kScratchpad, scratchpad.get_desc().get_size()));
    args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad);
  }
  primitive.execute(s, args);
  if (output.move) output.move->execute(s, output.inner, output.user);
  s.wait();
}

}  // namespace gantry::onednn
