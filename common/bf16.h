// bfloat16: the upper 16 bits of an IEEE-754 binary32 (1 sign, 8 exponent, 7 mantissa
// bits). Conversion from float rounds to nearest, ties to even; NaN stays NaN (quiet)
// and +-Inf stay Inf. This is the storage type of the mixed-precision path.
#pragma once

#include <bit>
#include <cstdint>

namespace gantry {

struct bf16 {
  uint16_t bits = 0;

  static constexpr bf16 FromBits(uint16_t b) { return bf16{b}; }

  static constexpr bf16 FromFloat(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) {
      // NaN: keep the sign, force a quiet-NaN mantissa bit so truncation cannot make Inf.
      return bf16{static_cast<uint16_t>((u >> 16) | 0x0040u)};
    }
    const uint32_t lsb = (u >> 16) & 1u;
    const uint32_t rounding_bias = 0x7fffu + lsb;
    return bf16{static_cast<uint16_t>((u + rounding_bias) >> 16)};
  }

  constexpr float ToFloat() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
  explicit constexpr operator float() const { return ToFloat(); }
};

static_assert(sizeof(bf16) == 2);

}  // namespace gantry
