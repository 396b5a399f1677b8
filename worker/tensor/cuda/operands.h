// Matrix-product operands at a MathPrecision on the device: fp32 data as it is, or its
// copy rounded into 16-bit scratch (bf16 / fp16, round to nearest even) for the tensor
// cores. Used by the GEMM and the convolutions.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "worker/tensor/cuda/device_buffer.h"
#include "common/math_precision.h"

namespace gantry::cuda {

// The cuBLAS element type of operands at `precision`, and its size in bytes.
cudaDataType_t OperandType(MathPrecision precision);
size_t OperandBytes(MathPrecision precision);

// A rows x cols matrix (row stride ld) at `precision`: `src` itself (row stride ld) for
// kFp32, else a dense rounded copy (row stride cols) in `scratch`. Sets *out_ld.
const void* MatrixOperand(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                          DeviceBuffer& scratch, int64_t* out_ld);

}  // namespace gantry::cuda
