// bfloat16 on the wire: the rounding from fp32 and the pairwise sum that the bf16
// all-reduce applies (Communicator::AllReduceSumBf16).
//
// Wire rounding, WireBf16(x), is exactly what the AVX512-BF16 instruction VCVTNEPS2BF16
// computes, so that the vector paths (with or without that instruction) and the scalar
// reference give the same bits on every host:
//   - round to nearest, ties to even; values above the largest bf16 round to +-Inf;
//   - +-Inf stay +-Inf; NaN stays NaN (sign and top mantissa bits kept, made quiet);
//   - fp32 zeros and denormals (|x| < 2^-126) become a zero of the same sign.
// Only the last rule differs from bf16::FromFloat (common/bf16.h), which keeps
// denormals; gradients that small carry nothing an optimizer step could use.
//
// The sum of two bf16 values is computed in fp32 and rounded once: fp32 holds the exact
// sum of two bf16 values unless their exponents lie more than 16 apart, so the pair is
// rounded (nearly always) once, not twice. A NaN sum becomes the canonical quiet NaN
// 0x7fc0 (x86 would keep the first operand's payload), so the sum commutes bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace gantry {

inline uint16_t WireBf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7f800000u) == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);     // zero, denormal
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// dst[i] = WireBf16(src[i]). Vectorised (AVX-512 where the build targets it).
void ToWireBf16(const float* src, uint16_t* dst, int64_t count);

inline constexpr uint16_t kWireNan = 0x7fc0;

// The pair sum of the bf16 all-reduce.
inline uint16_t WireSum(uint16_t a, uint16_t b) {
  const float sum = Bf16ToFloat(a) + Bf16ToFloat(b);
  return sum != sum ? kWireNan : WireBf16(sum);
}

// inout[i] = WireSum(in[i], inout[i]): the reduction of the bf16 all-reduce (MPI's
// user-function convention: the incoming operand first).
void SumBf16Into(const uint16_t* in, uint16_t* inout, int64_t count);

// The implementations behind the two functions above, for tests that check every path
// this build has against the scalar reference. `Portable` always exists; the others
// are null when the build does not target their instructions.
struct Bf16WireKernels {
  const char* name;
  void (*to_wire)(const float* src, uint16_t* dst, int64_t count);
  void (*sum_into)(const uint16_t* in, uint16_t* inout, int64_t count);
};
Bf16WireKernels PortableBf16WireKernels();
Bf16WireKernels Avx512FBf16WireKernels();     // integer rounding on AVX-512F/BW
Bf16WireKernels Avx512Bf16WireKernels();      // VCVTNEPS2BF16 (AVX512-BF16)

}  // namespace gantry
