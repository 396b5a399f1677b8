// IEEE-754 binary16 ("half": 1 sign, 5 exponent, 10 mantissa bits; largest finite value
// 65504, smallest subnormal 2^-24). Conversion from float rounds to nearest, ties to
// even, through the subnormal range; values that round past 65504 become +-Inf; NaN
// stays NaN (quiet). The operand format of the fp16 mixed-precision path.
#pragma once

#include <bit>
#include <cstdint>

namespace gantry {

struct fp16 {
  uint16_t bits = 0;

  static constexpr fp16 FromBits(uint16_t b) { return fp16{b}; }

  static constexpr fp16 FromFloat(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    const uint32_t mag = u & 0x7fffffffu;
    if (mag >= 0x47800000u) {  // >= 65536 (rounds to Inf), Inf or NaN
      const bool nan = mag > 0x7f800000u;
      return fp16{static_cast<uint16_t>(sign | (nan ? 0x7e00u : 0x7c00u))};
    }
    if (mag < 0x38800000u) {  // below 2^-14, the smallest normal half: subnormal or zero
      // Adding 0.5 (whose ulp is 2^-24, the subnormal half's unit) makes the FPU round
      // |f| to a multiple of 2^-24, ties to even; the low mantissa bits then hold it.
      const float shifted = std::bit_cast<float>(mag) + 0.5f;
      return fp16{static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u))};
    }
    // Normal: rebias the exponent (127 -> 15) and round the mantissa from 23 to 10 bits,
    // ties to even (a carry into the exponent is the correct result, up to Inf).
    const uint32_t odd = (mag >> 13) & 1u;
    const uint32_t rebiased = mag - (uint32_t{112} << 23) + 0x0fffu + odd;
    return fp16{static_cast<uint16_t>(sign | (rebiased >> 13))};
  }

  constexpr float ToFloat() const {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    const uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
      const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return sign != 0 ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  explicit constexpr operator float() const { return ToFloat(); }
};

static_assert(sizeof(fp16) == 2);

}  // namespace gantry
