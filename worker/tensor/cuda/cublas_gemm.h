// Row-major GEMMs on cuBLAS (column-major) for the CUDA backend, with fp32
// accumulation always (CUBLAS_COMPUTE_32F): fp32 operands run plain fp32 (no TF32, so
// results match the CPU reference to fp32 round-off), bf16 / fp16 operands run on the
// tensor cores.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gantry::cuda {

// The calling thread's cuBLAS handle, bound to the compute stream (handles are not
// shared between threads; ranks may run as threads).
cublasHandle_t ThreadCublasHandle();

// A row-major matrix operand of a (strided-batched) GEMM: data of `type`, row stride
// `ld`, `stride` elements between the batch's matrices (0: the same matrix for all).
struct GemmOperand {
  const void* data;
  cudaDataType_t type;
  int64_t ld;
  int64_t stride = 0;
};

// For each of `batch` problems: C[m,n] = alpha * op(A) op(B) + beta * C, C fp32 with
// row stride ldc and batch stride stride_c. beta == 0 ignores C's contents.
void RowMajorGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a,
                  const GemmOperand& b, float beta, float* c, int64_t ldc, int64_t stride_c, int64_t batch);

}  // namespace gantry::cuda
