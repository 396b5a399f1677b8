#include "worker/tensor/cpu/operand_rounding.h"

#include <algorithm>

#include "common/bf16.h"
#include "common/check.h"
#include "common/fp16.h"

namespace gantry {

void RoundToPrecision(MathPrecision precision, int64_t count, const float* src, float* dst) {
  CHECK_GE(count, 0);
  switch (precision) {
    case MathPrecision::kFp32:
      if (dst != src) std::copy_n(src, count, dst);
      return;
    case MathPrecision::kBf16:
      for (int64_t i = 0; i < count; ++i) dst[i] = bf16::FromFloat(src[i]).ToFloat();
      return;
    case MathPrecision::kFp16:
      for (int64_t i = 0; i < count; ++i) dst[i] = fp16::FromFloat(src[i]).ToFloat();
      return;
  }
}

const float* RoundedOperand(MathPrecision precision, int64_t count, const float* src, std::vector<float>& scratch) {
  if (precision == MathPrecision::kFp32) return src;
  if (scratch.size() < static_cast<size_t>(count)) scratch.resize(static_cast<size_t>(count));
  RoundToPrecision(precision, count, src, scratch.data());
  return scratch.data();
}

const float* RoundedMatrix(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                           std::vector<float>& scratch, int64_t* out_ld) {
  if (precision == MathPrecision::kFp32) {
    *out_ld = ld;
    return src;
  }
  if (scratch.size() < static_cast<size_t>(rows * cols)) scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) RoundToPrecision(precision, cols, src + r * ld, scratch.data() + r * cols);
  *out_ld = cols;
  return scratch.data();
}

}  // namespace gantry
