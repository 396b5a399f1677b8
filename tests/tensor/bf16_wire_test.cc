#include "worker/tensor/bf16_wire.h"

#include <cmath>
#include <limits>
#include <vector>

#include "common/bf16.h"
#include "gtest/gtest.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float Bits(uint32_t u) { return std::bit_cast<float>(u); }

TEST(WireBf16, RoundsToNearestEvenAndOverflowsToInfinity) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the tie goes to the even mantissa.
  EXPECT_EQ(WireBf16(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  EXPECT_EQ(WireBf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(WireBf16(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3f81);
  EXPECT_EQ(WireBf16(-2.5f), 0xc020);
  EXPECT_EQ(WireBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(WireBf16(-std::numeric_limits<float>::max()), 0xff80);
  // The largest bf16 stays finite.
  EXPECT_EQ(WireBf16(Bf16ToFloat(0x7f7f)), 0x7f7f);
}

TEST(WireBf16, KeepsInfinityAndNanAndFlushesDenormalsToSignedZero) {
  EXPECT_EQ(WireBf16(kInf), 0x7f80);
  EXPECT_EQ(WireBf16(-kInf), 0xff80);
  EXPECT_EQ(WireBf16(Bits(0x7fc00000u)), 0x7fc0);
  EXPECT_EQ(WireBf16(Bits(0xffc00000u)), 0xffc0);
  // A NaN whose payload lies only in the low 16 bits must not truncate to Inf.
  EXPECT_EQ(WireBf16(Bits(0x7f800001u)), 0x7fc0);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(WireBf16(Bits(0xff800001u)))));
  EXPECT_EQ(WireBf16(0.0f), 0x0000);
  EXPECT_EQ(WireBf16(-0.0f), 0x8000);
  EXPECT_EQ(WireBf16(Bits(0x007fffffu)), 0x0000);  // largest denormal
  EXPECT_EQ(WireBf16(Bits(0x80000001u)), 0x8000);  // smallest negative denormal
  EXPECT_EQ(WireBf16(Bits(0x00800000u)), 0x0080);  // smallest normal stays
}

// Every bf16 pattern (the upper 16 bits) with low halves around the rounding points.
std::vector<float> RoundingSweep() {
  std::vector<float> v;
  for (uint32_t high = 0; high < 0x10000; ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) v.push_back(Bits((high << 16) | low));
  }
  return v;
}

bool IsDenormal(float x) { return x != 0.0f && std::fpclassify(x) == FP_SUBNORMAL; }

TEST(WireBf16, MatchesBf16FromFloatExceptForDenormals) {
  for (float x : RoundingSweep()) {
    if (IsDenormal(x)) continue;
    ASSERT_EQ(WireBf16(x), bf16::FromFloat(x).bits) << std::hex << std::bit_cast<uint32_t>(x);
  }
}

std::vector<Bf16WireKernels> AvailableKernels() {
  std::vector<Bf16WireKernels> out;
  for (const Bf16WireKernels& k : {PortableBf16WireKernels(), Avx512FBf16WireKernels(), Avx512Bf16WireKernels()}) {
    if (k.to_wire != nullptr) out.push_back(k);
  }
  return out;
}

TEST(WireBf16, EveryKernelRoundsLikeTheScalarReferenceAtEveryLength) {
  const std::vector<float> sweep = RoundingSweep();
  for (const Bf16WireKernels& k : AvailableKernels()) {
    SCOPED_TRACE(k.name);
    std::vector<uint16_t> out(sweep.size());
    k.to_wire(sweep.data(), out.data(), static_cast<int64_t>(sweep.size()));
    for (size_t i = 0; i < sweep.size(); ++i) {
      ASSERT_EQ(out[i], WireBf16(sweep[i])) << std::hex << std::bit_cast<uint32_t>(sweep[i]);
    }
    // Lengths that exercise the masked tail; nothing past `n` may be written.
    for (int64_t n : {0, 1, 15, 16, 17, 31, 33}) {
      std::vector<uint16_t> tail(static_cast<size_t>(n) + 4, 0xabcd);
      k.to_wire(sweep.data() + 1000, tail.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(tail[i], WireBf16(sweep[1000 + i])) << "n " << n;
      for (size_t i = static_cast<size_t>(n); i < tail.size(); ++i) ASSERT_EQ(tail[i], 0xabcd) << "n " << n;
    }
  }
}

uint16_t ScalarSum(uint16_t a, uint16_t b) { return WireSum(a, b); }

TEST(SumBf16, AddsInFp32AndRoundsOnce) {
  const uint16_t one = 0x3f80, two = 0x4000;
  uint16_t inout = one;
  SumBf16Into(&one, &inout, 1);
  EXPECT_EQ(inout, two);
  // 1 + 2^-8 is exact in fp32 and a tie in bf16: one rounding gives 1 (even).
  const uint16_t tiny = WireBf16(0x1p-8f);
  inout = one;
  SumBf16Into(&tiny, &inout, 1);
  EXPECT_EQ(inout, one);
  EXPECT_EQ(ScalarSum(0x7f80, 0xff80), kWireNan);  // Inf + -Inf is NaN
  EXPECT_EQ(ScalarSum(0x7f7f, 0x7f7f), 0x7f80);     // overflow to Inf
  EXPECT_EQ(ScalarSum(0xffd3, one), kWireNan);      // NaN propagates, canonical
  EXPECT_EQ(ScalarSum(0xff97, 0xffe7), kWireNan);   // whatever the payloads
  EXPECT_EQ(ScalarSum(0x7f80, 0x7f80), 0x7f80);
}

TEST(SumBf16, EveryKernelMatchesTheScalarSumAndCommutes) {
  Rng rng(7);
  std::vector<uint16_t> a, b;
  const uint16_t special[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f7f, 0xff7f, 0x0080, 0x8080, 0x3f80};
  for (uint16_t x : special) {
    for (uint16_t y : special) a.push_back(x), b.push_back(y);
  }
  for (uint16_t nan : {0xff97, 0xffe7, 0x7f81}) a.push_back(nan), b.push_back(0xffc1);
  for (int i = 0; i < 200000; ++i) {
    a.push_back(static_cast<uint16_t>(rng.Below(0x10000)));
    // Nearby magnitudes too, where cancellation and carries happen.
    const uint64_t other = i % 2 ? rng.Below(0x10000) : a.back() ^ rng.Below(0x80ff);
    b.push_back(static_cast<uint16_t>(other));
  }
  const int64_t n = static_cast<int64_t>(a.size());
  for (const Bf16WireKernels& k : AvailableKernels()) {
    SCOPED_TRACE(k.name);
    std::vector<uint16_t> ab = b, ba = a;
    k.sum_into(a.data(), ab.data(), n);
    k.sum_into(b.data(), ba.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(ab[i], ScalarSum(a[i], b[i])) << std::hex << a[i] << " + " << b[i];
      ASSERT_EQ(ab[i], ba[i]) << std::hex << a[i] << " + " << b[i];
    }
  }
}

}  // namespace
}  // namespace gantry
