// Rounding of matrix-product operands to a MathPrecision, the heart of the reference
// semantics of mixed precision: a 16-bit operand is an fp32 value that the 16-bit
// format represents exactly, so a product of two of them is exact in fp32 and an fp32
// GEMM over rounded operands is "16-bit operands, fp32 accumulation".
#pragma once

#include <cstdint>
#include <vector>

#include "common/math_precision.h"

namespace gantry {

// dst[i] = src[i] rounded to `precision` (to nearest, ties to even; identity for kFp32).
// dst may alias src.
void RoundToPrecision(MathPrecision precision, int64_t count, const float* src, float* dst);

// `src` itself for kFp32; otherwise its rounded copy in `scratch` (grown as needed).
const float* RoundedOperand(MathPrecision precision, int64_t count, const float* src, std::vector<float>& scratch);

// The rounded copy of a rows x cols matrix stored with row stride ld, packed densely
// (row stride cols) into `scratch`; `src` itself (stride ld) for kFp32. Returns the data
// and sets *out_ld to its row stride.
const float* RoundedMatrix(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                           std::vector<float>& scratch, int64_t* out_ld);

}  // namespace gantry
