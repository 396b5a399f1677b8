// CudaBackend::Gemm and the operand rounding it shares with the convolutions.
#include "common/check.h"
#include "worker/tensor/cuda/cublas_gemm.h"
#include "worker/tensor/cuda/cuda_backend.h"
#include "worker/tensor/cuda/cuda_kernels.h"
#include "worker/tensor/cuda/cuda_memory.h"
#include "worker/tensor/cuda/operands.h"

namespace gantry {
namespace cuda {

cudaDataType_t OperandType(MathPrecision precision) {
  switch (precision) {
    case MathPrecision::kFp32: return CUDA_R_32F;
    case MathPrecision::kBf16: return CUDA_R_16BF;
    case MathPrecision::kFp16: return CUDA_R_16F;
  }
  CHECK(false) << "precision " << static_cast<int>(precision);
  return CUDA_R_32F;
}

size_t OperandBytes(MathPrecision precision) { return precision == MathPrecision::kFp32 ? 4 : 2; }

const void* MatrixOperand(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                          DeviceBuffer& scratch, int64_t* out_ld) {
  if (precision == MathPrecision::kFp32) {
    *out_ld = ld;
    return src;
  }
  scratch.Reset(static_cast<size_t>(rows * cols) * 2);
  auto stream = static_cast<cudaStream_t>(ComputeStream());
  if (precision == MathPrecision::kBf16) {
    ToBf16(rows, cols, src, ld, scratch.as<__nv_bfloat16>(), stream);
  } else {
    ToFp16(rows, cols, src, ld, scratch.as<__half>(), stream);
  }
  *out_ld = cols;
  return scratch.as<void>();
}

}  // namespace cuda

void CudaBackend::Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                       int64_t ldc) {
  CHECK(m >= 0 && n >= 0 && k >= 0) << "m=" << m << " n=" << n << " k=" << k;
  if (m == 0 || n == 0) return;
  // Stored shapes: A is [m,k] or, transposed, [k,m]; likewise B is [k,n] or [n,k].
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  CHECK_GE(lda, a_cols);
  CHECK_GE(ldb, b_cols);
  CHECK_GE(ldc, n);
  if (k == 0) {  // no products: C = beta * C, done here rather than trusting cuBLAS's k == 0 path
    cuda::ScaleMatrix(m, n, beta, c, ldc, static_cast<cudaStream_t>(cuda::ComputeStream()));
    return;
  }
  cuda::DeviceBuffer a_scratch, b_scratch;
  const cudaDataType_t type = cuda::OperandType(precision);
  const void* a_data = cuda::MatrixOperand(precision, a_rows, a_cols, a, lda, a_scratch, &lda);
  const void* b_data = cuda::MatrixOperand(precision, b_rows, b_cols, b, ldb, b_scratch, &ldb);
  cuda::RowMajorGemm(trans_a, trans_b, m, n, k, alpha, {a_data, type, lda}, {b_data, type, ldb}, beta, c, ldc, 0, 1);
}

}  // namespace gantry
