#include "worker/tensor/cpu/operand_rounding.h"

#include <algorithm>
#include <bit>

#include "common/bf16.h"
#include "common/check.h"
#include "common/fp16.h"
#include "common/vector_clones.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace gantry {
namespace {

// Both formats round to nearest, ties to even, exactly as common/bf16.h and
// common/fp16.h (tests/tensor/mixed_precision_reference_test.cc checks it); the
// instructions only make it fast where the build targets them (-march=native).
GANTRY_VECTOR_CLONES
void RoundToBf16(int64_t count, const float* src, float* dst) {
  int64_t i = 0;
#if defined(__AVX512F__)
  // common/bf16.h's integer rounding, 16 lanes at a time. (vcvtneps2bf16 would flush
  // subnormals to zero, which the reference does not.)
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  const __m512i high = _mm512_set1_epi32(static_cast<int>(0xffff0000u)), magnitude = _mm512_set1_epi32(0x7fffffff);
  const __m512i inf = _mm512_set1_epi32(0x7f800000), quiet = _mm512_set1_epi32(0x00400000);
  for (; i + 16 <= count; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(src + i));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
    __m512i r = _mm512_and_si512(_mm512_add_epi32(u, _mm512_add_epi32(bias, lsb)), high);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), inf);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_and_si512(_mm512_or_si512(u, quiet), high));
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(r));
  }
#endif
  for (; i < count; ++i) dst[i] = bf16::FromFloat(src[i]).ToFloat();
}

GANTRY_VECTOR_CLONES
void RoundToFp16(int64_t count, const float* src, float* dst) {
  int64_t i = 0;
#if defined(__AVX512F__)
  // vcvtps2ph with round-to-nearest-even, and back (both exact about subnormals, Inf, NaN).
  for (; i + 16 <= count; i += 16) {
    const __m256i half = _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(half));
  }
#endif
  for (; i < count; ++i) dst[i] = fp16::FromFloat(src[i]).ToFloat();
}

// Blocks of 256 values: the OR of their low halves vectorises, and an fp32 activation
// (low bits set almost everywhere) stops after the first block.
GANTRY_VECTOR_CLONES
bool BitsBelowBf16AllZero(int64_t count, const float* src) {
  constexpr int64_t kBlock = 256;
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    const int64_t end = std::min(count, begin + kBlock);
    uint32_t low = 0;
    for (int64_t i = begin; i < end; ++i) low |= std::bit_cast<uint32_t>(src[i]) & 0xffffu;
    if (low != 0) return false;
  }
  return true;
}

}  // namespace

bool AlreadyAtPrecision(MathPrecision precision, int64_t count, const float* src) {
  switch (precision) {
    case MathPrecision::kFp32: return true;
    // A NaN whose low half is zero stays as it is: rounding would only quiet it, and
    // a NaN in a product operand gives NaN either way.
    case MathPrecision::kBf16: return BitsBelowBf16AllZero(count, src);
    case MathPrecision::kFp16: return false;
  }
  return false;
}

void RoundToPrecision(MathPrecision precision, int64_t count, const float* src, float* dst) {
  CHECK_GE(count, 0);
  switch (precision) {
    case MathPrecision::kFp32:
      if (dst != src) std::copy_n(src, count, dst);
      return;
    case MathPrecision::kBf16:
      RoundToBf16(count, src, dst);
      return;
    case MathPrecision::kFp16:
      RoundToFp16(count, src, dst);
      return;
  }
}

const float* RoundedOperand(MathPrecision precision, int64_t count, const float* src, std::vector<float>& scratch) {
  if (AlreadyAtPrecision(precision, count, src)) return src;
  if (scratch.size() < static_cast<size_t>(count)) scratch.resize(static_cast<size_t>(count));
  RoundToPrecision(precision, count, src, scratch.data());
  return scratch.data();
}

bool RowsAlreadyAtPrecision(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld) {
  for (int64_t r = 0; r < rows; ++r) {
    if (!AlreadyAtPrecision(precision, cols, src + r * ld)) return false;
  }
  return true;
}

const float* RoundedMatrix(MathPrecision precision, int64_t rows, int64_t cols, const float* src, int64_t ld,
                           std::vector<float>& scratch, int64_t* out_ld) {
  if (RowsAlreadyAtPrecision(precision, rows, cols, src, ld)) {
    *out_ld = ld;
    return src;
  }
  if (scratch.size() < static_cast<size_t>(rows * cols)) scratch.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) RoundToPrecision(precision, cols, src + r * ld, scratch.data() + r * cols);
  *out_ld = cols;
  return scratch.data();
}

}  // namespace gantry
