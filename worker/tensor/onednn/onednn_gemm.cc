// GEMM on oneDNN's matmul primitive. fp32 reads and writes the caller's strided arrays
// directly; bf16 first reorders A and B to bf16 (B into the layout the kernel prefers).
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
using onednn::Plan;
using onednn::Runtime;
using onednn::Slot;

struct GemmKey {
  MathPrecision precision;
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  bool operator==(const GemmKey&) const = default;
};

struct GemmKeyHash {
  size_t operator()(const GemmKey& g) const {
    size_t h = std::hash<float>{}(g.alpha) ^ (std::hash<float>{}(g.beta) << 1);
    for (int64_t v : {static_cast<int64_t>(g.precision), int64_t{g.trans_a}, int64_t{g.trans_b}, g.m, g.n, g.k,
                      g.lda, g.ldb, g.ldc}) {
      h = h * 1000003u ^ std::hash<int64_t>{}(v);
    }
    return h;
  }
};

// The logical [rows, cols] matrix op(X) over storage with row stride ld (transposed:
// X is stored [cols, rows]).
md StridedDesc(int64_t rows, int64_t cols, int64_t ld, bool transposed) {
  return md({rows, cols}, dt::f32, transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1});
}

Plan BuildGemmPlan(Runtime& rt, const GemmKey& g) {
  const md a_user = StridedDesc(g.m, g.k, g.lda, g.trans_a);
  const md b_user = StridedDesc(g.k, g.n, g.ldb, g.trans_b);
  const md c_user = StridedDesc(g.m, g.n, g.ldc, false);
  const bool bf16 = g.precision == MathPrecision::kBf16;
  // bf16: A keeps its orientation (a plain copy-convert); B may take the blocked layout
  // the kernel prefers, since it is copied anyway.
  const md a_inner = bf16 ? md({g.m, g.k}, dt::bf16, g.trans_a ? tag::ba : tag::ab) : a_user;
  const md b_inner = bf16 ? md({g.k, g.n}, dt::bf16, tag::any) : b_user;
  dnnl::primitive_attr attr = onednn::ScratchpadAttr();
  if (g.alpha != 1.0f) attr.set_output_scales(0, {g.alpha});
  if (g.beta != 0.0f) {
    dnnl::post_ops sum;
    sum.append_sum(g.beta);
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_inner, b_inner, c_user), attr, rt.engine());
  Plan plan;
  plan.primitive = dnnl::matmul(pd);
  plan.inputs = {onednn::MakeInput(rt, DNNL_ARG_SRC, a_user, pd.src_desc(), Slot::kInputA),
                 onednn::MakeInput(rt, DNNL_ARG_WEIGHTS, b_user, pd.weights_desc(), Slot::kInputB)};
  // The sum post-op reads C in place, so C is always the caller's array.
  plan.output = onednn::MakeOutput(rt, DNNL_ARG_DST, c_user, pd.dst_desc(), onednn::OutputMode::kOverwrite);
  plan.scratchpad = dnnl::memory(pd.scratchpad_desc(), rt.engine(), DNNL_MEMORY_NONE);
  plan.implementation = pd.impl_info_str();
  return plan;
}

Plan* FindGemmPlan(const GemmKey& key) {
  thread_local std::unordered_map<GemmKey, std::optional<Plan>, GemmKeyHash> cache;
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::optional<Plan> plan;
    try {
      plan = BuildGemmPlan(Runtime::ForThisThread(), key);
      // The caller's C must be written in place (beta reads it).
      if (plan->output.move) plan.reset();
    } catch (const dnnl::error&) {
      plan.reset();
    }
    it = cache.emplace(key, std::move(plan)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// A rows x cols matrix (row stride *ld) rounded to `precision`, packed densely into
// this thread's `slot` (*ld becomes cols); the matrix itself where it holds values of that
// precision already.
const float* RoundedStagingMatrix(Runtime& rt, Slot slot, MathPrecision precision, int64_t rows, int64_t cols,
                                  const float* src, int64_t* ld) {
  if (RowsAlreadyAtPrecision(precision, rows, cols, src, *ld)) return src;
  auto* rounded = static_cast<float*>(rt.Buffer(slot, static_cast<size_t>(rows * cols) * sizeof(float)));
  for (int64_t r = 0; r < rows; ++r) RoundToPrecision(precision, cols, src + r * *ld, rounded + r * cols);
  *ld = cols;
  return rounded;
}

}  // namespace

void OnednnBackend::Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                         float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc) {
  CHECK(m >= 0 && n >= 0 && k >= 0) << "m=" << m << " n=" << n << " k=" << k;
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  CHECK_GE(lda, a_cols);
  CHECK_GE(ldb, b_cols);
  CHECK_GE(ldc, n);
  // Matrix-vector products (D's 6272 -> 1 Linear) go to the reference: oneDNN's matmul
  // runs them at 10 / 40 GFLOP/s (fp32 forward / weight gradient, batch 64) against
  // Eigen's 51 / 65, and at 5.6 / 3.0 against 6.2 / 6.3 in bf16.
  if (m <= 1 || n <= 1 || k == 0) {
    return EigenCpuBackend::Gemm(precision, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  if (onednn::RunsOnFp32Kernels(precision)) {
    // fp32 kernels on operands rounded to the precision's values: the same numbers.
    Runtime& rt = Runtime::ForThisThread();
    a = RoundedStagingMatrix(rt, Slot::kStagingA, precision, a_rows, a_cols, a, &lda);
    b = RoundedStagingMatrix(rt, Slot::kStagingB, precision, b_rows, b_cols, b, &ldb);
    precision = MathPrecision::kFp32;
  }
  Plan* plan = FindGemmPlan(GemmKey{precision, trans_a, trans_b, m, n, k, lda, ldb, ldc, alpha, beta});
  if (plan == nullptr) {
    return EigenCpuBackend::Gemm(precision, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  const void* in[] = {a, b};
  plan->Run(Runtime::ForThisThread(), in, c);
}

}  // namespace gantry
