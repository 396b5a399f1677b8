// The number format of the operands of matrix products (GEMM, convolutions).
#pragma once

#include <optional>
#include <string_view>

namespace gantry {

// kFp32 is plain fp32. kBf16 and kFp16 are mixed precision: the operands (weights,
// activations, incoming gradients) are rounded to the 16-bit format (round to nearest,
// ties to even; common/bf16.h, common/fp16.h) before the product, products accumulate in
// fp32 and results are fp32. Element-wise work, BatchNorm, losses and optimizers stay
// fp32; master weights are always fp32.
enum class MathPrecision { kFp32, kBf16, kFp16 };

constexpr std::string_view MathPrecisionName(MathPrecision p) {
  switch (p) {
    case MathPrecision::kFp32: return "fp32";
    case MathPrecision::kBf16: return "bf16";
    case MathPrecision::kFp16: return "fp16";
  }
  return "?";
}

// "fp32" | "bf16" | "fp16" -> the precision; anything else -> nullopt.
constexpr std::optional<MathPrecision> ParseMathPrecision(std::string_view name) {
  for (MathPrecision p : {MathPrecision::kFp32, MathPrecision::kBf16, MathPrecision::kFp16}) {
    if (name == MathPrecisionName(p)) return p;
  }
  return std::nullopt;
}

}  // namespace gantry
