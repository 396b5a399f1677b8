// A cached oneDNN primitive together with the layout moves around it: the caller's
// arrays are plain fp32 (NCHW, OIHW, row-major); the primitive may want blocked layouts
// or bf16, chosen by oneDNN (format_tag::any). A Plan is built once per problem shape
// and reused; per call it only rebinds pointers.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "worker/tensor/onednn/onednn_runtime.h"

namespace gantry::onednn {

// One argument of the primitive.
struct Operand {
  int arg = 0;                          // DNNL_ARG_*
  dnnl::memory user;                    // the caller's array (handle bound per call)
  dnnl::memory inner;                   // what the primitive reads/writes (== user without a reorder)
  std::optional<dnnl::reorder> move;    // user -> inner (inputs) or inner -> user (the output)
  Slot slot = Slot::kInputA;            // scratch for `inner` when it is not the user array
};

// How the output reaches the caller's array.
enum class OutputMode {
  kOverwrite,   // out = result
  kAccumulate,  // out += result (a gradient)
};

struct Plan {
  dnnl::primitive primitive;
  std::vector<Operand> inputs;
  Operand output;
  dnnl::memory scratchpad;  // user-managed scratchpad (handle bound per call)
  std::string implementation;  // oneDNN's name for the kernel, for benchmarks and logs

  // Runs the primitive on the caller's arrays (in the order of `inputs`; each of the
  // type its operand's user descriptor says, fp32 unless a plan says otherwise).
  void Run(Runtime& rt, std::span<const void* const> in, float* out);
};

// An input operand: `user_md` is the caller's layout, `inner_md` the primitive's.
Operand MakeInput(Runtime& rt, int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
                  Slot slot);
// The output operand; kAccumulate always goes through a scratch result and a reorder
// that adds it (a sum post-op), since oneDNN primitives overwrite their outputs.
Operand MakeOutput(Runtime& rt, int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
                   OutputMode mode);
// The attributes every gantry primitive is made with: a user-managed scratchpad, so no
// primitive allocates per call.
dnnl::primitive_attr ScratchpadAttr();

}  // namespace gantry::onednn
