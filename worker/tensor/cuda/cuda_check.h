// CHECK-style failure for CUDA runtime and cuBLAS calls inside the CUDA backend: a
// failing call there is a broken device or a programming error (bad pointer, bad
// launch), not an input a caller could fix, so it ends the process naming the call and
// the error. Host-compiler only (includes absl logging through common/check.h).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/check.h"

#define GANTRY_CUDA_CHECK(call)                                                          \
  do {                                                                                   \
    const cudaError_t gantry_cuda_err_ = (call);                                         \
    CHECK(gantry_cuda_err_ == cudaSuccess) << #call << ": " << cudaGetErrorName(gantry_cuda_err_) \
                                           << " (" << cudaGetErrorString(gantry_cuda_err_) << ")"; \
  } while (0)

#define GANTRY_CUBLAS_CHECK(call)                                                       \
  do {                                                                                  \
    const cublasStatus_t gantry_cublas_st_ = (call);                                    \
    CHECK(gantry_cublas_st_ == CUBLAS_STATUS_SUCCESS)                                   \
        << #call << ": " << cublasGetStatusName(gantry_cublas_st_) << " ("             \
        << cublasGetStatusString(gantry_cublas_st_) << ")";                             \
  } while (0)

// After a kernel launch: reports a bad launch configuration at the launch site.
#define GANTRY_CUDA_CHECK_LAUNCH() GANTRY_CUDA_CHECK(cudaGetLastError())
