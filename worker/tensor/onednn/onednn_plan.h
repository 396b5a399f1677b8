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

// An input that consecutive plans of one call read (a layer's dy for its backward-weights
// and backward-data): the first plan that moves it to a blocked layout leaves the copy
// here, in Slot::kShared, and a later one whose operand wants the same layout uses it as
// is. Valid for one caller array and one thread, until the next use of Slot::kShared.
struct SharedInput {
  size_t index = 0;          // which of the plan's inputs it is (differs between plans)
  dnnl::memory::desc inner;  // the layout of the copy; zero desc: none made yet
  void* data = nullptr;
};

struct Plan {
  dnnl::primitive primitive;
  std::vector<Operand> inputs;
  Operand output;
  dnnl::memory scratchpad;  // user-managed scratchpad (handle bound per call)
  std::string implementation;  // oneDNN's name for the kernel, for benchmarks and logs

  // Runs the primitive on the caller's arrays (in the order of `inputs`; each of the
  // type its operand's user descriptor says, fp32 unless a plan says otherwise).
  // With `shared`, input shared->index is the shared operand (see SharedInput).
  void Run(Runtime& rt, std::span<const void* const> in, float* out, SharedInput* shared = nullptr);
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
