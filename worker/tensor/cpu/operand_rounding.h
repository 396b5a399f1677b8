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

// Whether rounding `src` to `precision` would change nothing: every value already a
// bf16 one (kFp32: always). Stops at the first value that is not, so an fp32 activation
// costs a few reads; an operand that is exact (a saved input widened back from its bf16
// copy, as every backward-weights product reads) costs one read pass instead of a
// rounded copy. fp16 is never reported exact (its check would cost a conversion).
bool AlreadyAtPrecision(MathPrecision precision, int64_t count, const float* src);

// `src` itself for kFp32 or when AlreadyAtPrecision; otherwise its rounded copy in `scratch` (grown as needed).
const float* RoundedOperand(MathPrecision precision, int64_t count, const float* src, std::vector<float>& scratch);

// AlreadyAtPrecision for every row of a rows x cols matrix with row stride ld.
bool RowsAlreadyAtPrecision(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld);

// The rounded copy of a rows x cols matrix stored with row stride ld, packed densely
// (row stride cols) into `scratch`; `src` itself (stride ld) for kFp32. Returns the data
// and sets *out_ld to its row stride.
const float* RoundedMatrix(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                           std::vector<float>& scratch, int64_t* out_ld);

}  // namespace gantry
