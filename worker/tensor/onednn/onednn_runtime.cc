#include "worker/tensor/onednn/onednn_runtime.h"

#include <cstdlib>
#include <sstream>

#include "common/check.h"

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#endif

namespace gantry::onednn {
namespace {

// Debian's libdnnl is built on OpenMP (libgomp). Its parallel regions use as many
// threads as omp_get_max_threads() of the calling thread, which defaults to every core:
// two ranks on two cores would each spawn a team and fight over the cores. The setting
// is per thread (an OpenMP ICV of the calling thread), so it is made in each thread that
// uses oneDNN, and nothing in the environment changes (mpirun and its children see the
// same OMP_* variables as before).
void PinThisThreadToOneThread() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_num_threads(1);
#elif DNNL_CPU_THREADING_RUNTIME != DNNL_RUNTIME_SEQ
#error "gantry pins oneDNN to one thread per rank for the OpenMP and sequential runtimes only"
#endif
}

const char* IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx (AMX bf16/int8)";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni (no bf16 instructions)";
    case dnnl::cpu_isa::avx512_core: return "avx512_core (no bf16 instructions)";
    case dnnl::cpu_isa::avx2: return "avx2";
    default: return "other";
  }
}

// What oneDNN runs bf16 products on, on this CPU. get_effective_cpu_isa() reports only
// the cap ("all" unless ONEDNN_MAX_CPU_ISA is set), so ask a tiny bf16 matmul which
// implementation it chose: the name carries the ISA.
Bf16Kernels ProbeBf16Kernels() {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc a({32, 32}, dt::bf16, tag::ab), b({32, 32}, dt::bf16, tag::ab);
  const dnnl::memory::desc c({32, 32}, dt::f32, tag::ab);
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), eng);
    const std::string impl = pd.impl_info_str();
    if (impl.find("amx") != std::string::npos) return {true, IsaName(dnnl::cpu_isa::avx512_core_amx)};
    if (impl.find("bf16") != std::string::npos) return {true, IsaName(dnnl::cpu_isa::avx512_core_bf16)};
    return {false, "oneDNN's bf16 matmul here is \"" + impl + "\""};
  } catch (const dnnl::error&) {
    return {false, "oneDNN has no bf16 matmul here"};
  }
}

// Asks a small fp32 convolution which implementation oneDNN chose: the name carries the
// ISA ("jit:avx512_core", "jit:avx2").
bool ProbeAvx512Fp32Kernels() {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::desc src({1, 16, 8, 8}, dt::f32, tag::any), wei({16, 16, 3, 3}, dt::f32, tag::any);
  const dnnl::memory::desc dst({1, 16, 8, 8}, dt::f32, tag::any);
  try {
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src,
                                        wei, dst, {1, 1}, {1, 1}, {1, 1}),
        eng);
    return std::string(pd.impl_info_str()).find("avx512") != std::string::npos;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

bool HasAvx512Fp32Kernels() {
  static const bool probed = ProbeAvx512Fp32Kernels();
  return probed;
}

const Bf16Kernels& NativeBf16Kernels() {
  static const Bf16Kernels probed = ProbeBf16Kernels();
  return probed;
}

bool HasAmxBf16Kernels() {
  return NativeBf16Kernels().native && NativeBf16Kernels().isa.find("amx") != std::string::npos;
}

bool RunsOnFp32Kernels(MathPrecision precision) {
  return precision == MathPrecision::kFp16 || (precision == MathPrecision::kBf16 && !NativeBf16Kernels().native);
}

Runtime::Runtime() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) { PinThisThreadToOneThread(); }

Runtime& Runtime::ForThisThread() {
  thread_local Runtime runtime;
  return runtime;
}

void* Runtime::Buffer(Slot slot, size_t bytes) {
  Block& b = blocks_[static_cast<int>(slot)];
  if (b.bytes < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* raw = std::aligned_alloc(64, rounded);
    CHECK(raw != nullptr) << "onednn: out of memory for a " << rounded << "-byte scratch buffer";
    b.data = {static_cast<std::byte*>(raw), std::free};
    b.bytes = rounded;
  }
  return b.data.get();
}

std::string Describe() {
  const dnnl_version_t* v = dnnl::version();
  std::ostringstream s;
  s << "oneDNN " << v->major << "." << v->minor << "." << v->patch << " ("
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    << "OpenMP runtime"
#else
    << "sequential runtime"
#endif
    << ", 1 thread per rank), bf16 kernels: "
    << (NativeBf16Kernels().native ? NativeBf16Kernels().isa : "none (" + NativeBf16Kernels().isa + ")");
  return s.str();
}

}  // namespace gantry::onednn
