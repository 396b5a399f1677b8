#include "worker/tensor/cuda/cublas_gemm.h"

#include <limits>

#include "worker/tensor/cuda/cuda_check.h"
#include "worker/tensor/cuda/cuda_memory.h"

namespace gantry::cuda {
namespace {

int AsInt(int64_t v, const char* what) {
  CHECK(v >= 0 && v <= std::numeric_limits<int>::max()) << what << " = " << v << " exceeds cuBLAS's int range";
  return static_cast<int>(v);
}

}  // namespace

cublasHandle_t ThreadCublasHandle() {
  // Destroyed never: a thread_local destructor may run after the runtime unloaded.
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    GANTRY_CUBLAS_CHECK(cublasCreate(&h));
    GANTRY_CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(ComputeStream())));
    // Pedantic fp32 for fp32 operands: no TF32 and no reduced-precision reductions.
    GANTRY_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    return h;
  }();
  return handle;
}

void RowMajorGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a,
                  const GemmOperand& b, float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the same buffers,
  // with A and B (and m and n) swapped.
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  GANTRY_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      ThreadCublasHandle(), op_b, op_a, AsInt(n, "n"), AsInt(m, "m"), AsInt(k, "k"), &alpha, b.data, b.type,
      AsInt(b.ld, "ldb"), b.stride, a.data, a.type, AsInt(a.ld, "lda"), a.stride, &beta, c, CUDA_R_32F,
      AsInt(ldc, "ldc"), stride_c, AsInt(batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace gantry::cuda
