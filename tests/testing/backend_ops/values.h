// Host-side values for the op suite's checks: host tensors as double vectors (rounded to
// a 16-bit operand format, or as magnitudes) and back, and the inputs the rows share.
#pragma once

#include <cstdint>
#include <vector>

#include "common/math_precision.h"
#include "worker/tensor/tensor.h"

namespace gantry::testing {

// The elements of a host tensor in double: as they are, rounded to `precision` (as the
// backends round product operands: common/bf16.h, common/fp16.h), and/or as |x|.
std::vector<double> Doubles(const Tensor& t, MathPrecision precision = MathPrecision::kFp32, bool magnitude = false);
inline std::vector<double> Magnitudes(const Tensor& t) { return Doubles(t, MathPrecision::kFp32, true); }

// A host fp32 tensor of `shape` holding `values` rounded to float.
Tensor Floats(const std::vector<double>& values, const Shape& shape);

// x uniform in [offset - scale, offset + scale] (RandomTensor's draws, shifted).
Tensor Shifted(const Shape& shape, uint64_t seed, float scale, float offset);

// Element-wise |x| + |y| + ... of host tensors of one shape.
Tensor SumOfMagnitudes(const std::vector<Tensor>& terms);

}  // namespace gantry::testing
