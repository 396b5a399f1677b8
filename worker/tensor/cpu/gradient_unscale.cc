#include "worker/tensor/cpu/gradient_unscale.h"

#include <bit>

#include "common/vector_clones.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define GANTRY_UNSCALE_AVX512 1
#include <immintrin.h>
#endif

namespace gantry {
namespace {

constexpr uint32_t kExponent = 0x7f800000u;

// Non-finite iff the exponent bits are all ones. Integer arithmetic, so the compiler may
// vectorise the reduction without reassociating floating-point sums.
inline uint32_t NonFinite(float x) { return (std::bit_cast<uint32_t>(x) & kExponent) == kExponent; }

#ifdef GANTRY_UNSCALE_AVX512

constexpr int64_t kUnscaleLanes = 16;

__mmask16 UnscaleTailMask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1u); }

__mmask16 NonFiniteLanes(__m512 y) {
  const __m512i exponent = _mm512_set1_epi32(static_cast<int>(kExponent));
  return _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(y), exponent), exponent);
}

__m512 WidenBf16(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }

#endif

}  // namespace

GANTRY_VECTOR_CLONES
bool UnscaleAndCheckFinitePortable(float* grads, int64_t count, float inv_scale) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    grads[i] *= inv_scale;
    bad |= NonFinite(grads[i]);
  }
  return bad == 0;
}

GANTRY_VECTOR_CLONES
bool UnscaleFromBf16AndCheckFinitePortable(const uint16_t* wire, float* grads, int64_t count, float inv_scale) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    grads[i] = std::bit_cast<float>(static_cast<uint32_t>(wire[i]) << 16) * inv_scale;
    bad |= NonFinite(grads[i]);
  }
  return bad == 0;
}

bool UnscaleAndCheckFinite(float* grads, int64_t count, float inv_scale) {
#ifdef GANTRY_UNSCALE_AVX512
  const __m512 s = _mm512_set1_ps(inv_scale);
  __mmask16 bad = 0;
  int64_t i = 0;
  for (; i + kUnscaleLanes <= count; i += kUnscaleLanes) {
    const __m512 y = _mm512_mul_ps(_mm512_loadu_ps(grads + i), s);
    _mm512_storeu_ps(grads + i, y);
    bad |= NonFiniteLanes(y);
  }
  if (i < count) {
    const __mmask16 m = UnscaleTailMask(count - i);
    const __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, grads + i), s);
    _mm512_mask_storeu_ps(grads + i, m, y);
    bad |= NonFiniteLanes(y) & m;
  }
  return bad == 0;
#else
  return UnscaleAndCheckFinitePortable(grads, count, inv_scale);
#endif
}

bool UnscaleFromBf16AndCheckFinite(const uint16_t* wire, float* grads, int64_t count, float inv_scale) {
#ifdef GANTRY_UNSCALE_AVX512
  const __m512 s = _mm512_set1_ps(inv_scale);
  __mmask16 bad = 0;
  int64_t i = 0;
  for (; i + kUnscaleLanes <= count; i += kUnscaleLanes) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wire + i));
    const __m512 y = _mm512_mul_ps(WidenBf16(bits), s);
    _mm512_storeu_ps(grads + i, y);
    bad |= NonFiniteLanes(y);
  }
  if (i < count) {
    const __mmask16 m = UnscaleTailMask(count - i);
    const __m512 y = _mm512_mul_ps(WidenBf16(_mm256_maskz_loadu_epi16(m, wire + i)), s);
    _mm512_mask_storeu_ps(grads + i, m, y);
    bad |= NonFiniteLanes(y) & m;
  }
  return bad == 0;
#else
  return UnscaleFromBf16AndCheckFinitePortable(wire, grads, count, inv_scale);
#endif
}

}  // namespace gantry
