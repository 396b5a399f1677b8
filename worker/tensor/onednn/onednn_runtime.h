// Per-thread oneDNN state: the CPU engine and stream, the thread pinning, and reusable
// scratch buffers. Each thread that runs oneDNN work gets its own (ranks may run as
// threads in one process, as the tests do), so nothing here needs a lock.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "oneapi/dnnl/dnnl.hpp"
#include "common/math_precision.h"

namespace gantry::onednn {

// The scratch buffers of one call: each slot is used at most once per primitive run,
// so a plan's operands never share memory. Staging slots hold operands prepared before
// a plan runs (rounded copies, im2col columns). kShared holds an operand two plans of one
// call read, moved to their layout once (Plan::Run's SharedInput).
enum class Slot { kInputA, kInputB, kOutput, kScratchpad, kStagingA, kStagingB, kShared, kCount };

class Runtime {
 public:
  // This thread's runtime, made on first use. Making it limits oneDNN to one thread
  // on this thread (a rank runs one thread; data parallelism comes from ranks).
  static Runtime& ForThisThread();

  const dnnl::engine& engine() const { return engine_; }
  dnnl::stream& stream() { return stream_; }

  // A 64-byte aligned buffer of at least `bytes` for `slot`, valid until the next call
  // for the same slot on this thread (grown, never shrunk).
  void* Buffer(Slot slot, size_t bytes);

 private:
  Runtime();

  struct Block {
    std::unique_ptr<std::byte, void (*)(void*)> data{nullptr, nullptr};
    size_t bytes = 0;
  };
  dnnl::engine engine_;
  dnnl::stream stream_;
  Block blocks_[static_cast<int>(Slot::kCount)];
};

// Whether oneDNN has bf16 kernels on this CPU (AVX512-BF16 or AMX, under the cap
// ONEDNN_MAX_CPU_ISA sets), and which ISA runs them. Probed once per process: both the
// CPU and the cap are fixed for its lifetime. Without them, bf16 products run oneDNN's
// fp32 kernels on operands rounded to bf16 (the same numbers, at fp32 speed) instead of
// oneDNN's slow reference bf16 kernels.
struct Bf16Kernels {
  bool native = false;
  std::string isa;  // native: the ISA ("avx512_core_bf16"); else why there are none
};
const Bf16Kernels& NativeBf16Kernels();

// Whether those bf16 kernels are AMX's (tile matrix units) rather than AVX512-BF16's
// dot-product instructions: the two rank some convolution routes differently
// (onednn_conv_route.cc).
bool HasAmxBf16Kernels();

// Whether products at `precision` run oneDNN's fp32 kernels on rounded operands rather
// than kernels of that precision: fp16 always (oneDNN 2.6 has no x86 fp16 kernels), bf16
// where the CPU has no bf16 kernels.
bool RunsOnFp32Kernels(MathPrecision precision);

// Whether oneDNN's fp32 convolutions here are its AVX-512 kernels (false on AVX2-only
// CPUs, or under ONEDNN_MAX_CPU_ISA=AVX2). Some of its kernels rank differently on the
// two (onednn_conv_route.cc). Probed once per process, like NativeBf16Kernels.
bool HasAvx512Fp32Kernels();

// "oneDNN 2.6.3 (OpenMP runtime, 1 thread per rank), ISA: ..." for logs and benchmarks.
std::string Describe();

}  // namespace gantry::onednn
