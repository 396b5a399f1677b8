#include "worker/tensor/bf16_wire.h"

#include "common/vector_clones.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define GANTRY_WIRE_AVX512 1
#include <immintrin.h>
#endif

namespace gantry {
namespace {

GANTRY_VECTOR_CLONES
void ToWirePortable(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = WireBf16(src[i]);
}

GANTRY_VECTOR_CLONES
void SumIntoPortable(const uint16_t* in, uint16_t* inout, int64_t count) {
  for (int64_t i = 0; i < count; ++i) inout[i] = WireSum(in[i], inout[i]);
}

#ifdef GANTRY_WIRE_AVX512

constexpr int64_t kWireLanes = 16;

__mmask16 TailMask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1u); }

__m512 LoadBf16(const uint16_t* p, __mmask16 m) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

// WireBf16 on 16 lanes with integer operations only (AVX-512F).
__m256i RoundIntegerPath(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i high = _mm512_srli_epi32(u, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
  const __m512i magnitude = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(high, _mm512_set1_epi32(0x0040)));
  const __m512i exponent = _mm512_and_si512(u, _mm512_set1_epi32(0x7f800000));
  const __mmask16 tiny = _mm512_cmpeq_epi32_mask(exponent, _mm512_setzero_si512());
  r = _mm512_mask_mov_epi32(r, tiny, _mm512_and_si512(high, _mm512_set1_epi32(0x8000)));
  return _mm512_cvtepi32_epi16(r);
}

#ifdef __AVX512BF16__
__m256i RoundBf16Instruction(__m512 x) { return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)); }
#endif

template <__m256i (*Round)(__m512)>
void ToWireAvx512(const float* src, uint16_t* dst, int64_t count) {
  int64_t i = 0;
  for (; i + kWireLanes <= count; i += kWireLanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), Round(_mm512_loadu_ps(src + i)));
  }
  if (i < count) {
    const __mmask16 m = TailMask(count - i);
    _mm256_mask_storeu_epi16(dst + i, m, Round(_mm512_maskz_loadu_ps(m, src + i)));
  }
}

// WireSum of 16 lanes (masked-off lanes are don't-care).
template <__m256i (*Round)(__m512)>
__m256i SumLanes(const uint16_t* in, const uint16_t* inout, __mmask16 m) {
  const __m512 sum = _mm512_add_ps(LoadBf16(in, m), LoadBf16(inout, m));
  const __mmask16 nan = _mm512_cmp_ps_mask(sum, sum, _CMP_UNORD_Q);
  return _mm256_mask_mov_epi16(Round(sum), nan, _mm256_set1_epi16(static_cast<int16_t>(kWireNan)));
}

template <__m256i (*Round)(__m512)>
void SumIntoAvx512(const uint16_t* in, uint16_t* inout, int64_t count) {
  const __mmask16 all = 0xffff;
  int64_t i = 0;
  for (; i + kWireLanes <= count; i += kWireLanes) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(inout + i), SumLanes<Round>(in + i, inout + i, all));
  }
  if (i < count) {
    const __mmask16 m = TailMask(count - i);
    _mm256_mask_storeu_epi16(inout + i, m, SumLanes<Round>(in + i, inout + i, m));
  }
}

#endif  // GANTRY_WIRE_AVX512

Bf16WireKernels Best() {
  if (Bf16WireKernels k = Avx512Bf16WireKernels(); k.to_wire != nullptr) return k;
  if (Bf16WireKernels k = Avx512FBf16WireKernels(); k.to_wire != nullptr) return k;
  return PortableBf16WireKernels();
}

const Bf16WireKernels& Chosen() {
  static const Bf16WireKernels kernels = Best();
  return kernels;
}

}  // namespace

Bf16WireKernels PortableBf16WireKernels() { return {"portable", &ToWirePortable, &SumIntoPortable}; }

Bf16WireKernels Avx512FBf16WireKernels() {
#ifdef GANTRY_WIRE_AVX512
  return {"avx512f", &ToWireAvx512<RoundIntegerPath>, &SumIntoAvx512<RoundIntegerPath>};
#else
  return {"avx512f", nullptr, nullptr};
#endif
}

Bf16WireKernels Avx512Bf16WireKernels() {
#if defined(GANTRY_WIRE_AVX512) && defined(__AVX512BF16__)
  return {"avx512bf16", &ToWireAvx512<RoundBf16Instruction>, &SumIntoAvx512<RoundBf16Instruction>};
#else
  return {"avx512bf16", nullptr, nullptr};
#endif
}

void ToWireBf16(const float* src, uint16_t* dst, int64_t count) { Chosen().to_wire(src, dst, count); }

void SumBf16Into(const uint16_t* in, uint16_t* inout, int64_t count) { Chosen().sum_into(in, inout, count); }

}  // namespace gantry
