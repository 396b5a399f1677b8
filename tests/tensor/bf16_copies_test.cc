// The CPU backend's 16-bit copies and loss-scaling passes keep the contracts of the
// functions they stand for: NarrowToBf16 rounds as bf16::FromFloat (denormals kept),
// ToWireBf16 as WireBf16 (denormals flushed), WidenFromBf16 is exact, and the unscale
// passes give the bits and the verdict of gradient_unscale.h's.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/bf16.h"
#include "gtest/gtest.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/tensor/cpu/gradient_unscale.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Values() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, 1.0f + 0x1p-8f, 1.0f + 0x1p-7f + 0x1p-8f, 0x1p-130f, -0x1p-140f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), 3.4e38f, -65504.0f};
  Rng rng(4);
  for (int i = 0; i < 1000; ++i) v.push_back(static_cast<float>(rng.Normal() * 100.0));
  return v;
}

TEST(Bf16CopiesTest, NarrowRoundsAsFromFloatAndWideningIsExact) {
  const std::vector<float> v = Values();
  std::vector<uint16_t> bits(v.size());
  CpuBackend().NarrowToBf16(static_cast<int64_t>(v.size()), v.data(), bits.data());
  std::vector<float> back(v.size());
  CpuBackend().WidenFromBf16(static_cast<int64_t>(v.size()), bits.data(), back.data());
  for (size_t i = 0; i < v.size(); ++i) {
    const float want = bf16::FromFloat(v[i]).ToFloat();
    if (std::isnan(v[i])) {
      EXPECT_TRUE(std::isnan(back[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(want)) << "value " << v[i];
    }
  }
  EXPECT_NE(back[5], 0.0f) << "NarrowToBf16 keeps denormals";
}

TEST(Bf16CopiesTest, TheWireFormatIsWireBf16) {
  const std::vector<float> v = Values();
  std::vector<uint16_t> wire(v.size());
  CpuBackend().ToWireBf16(static_cast<int64_t>(v.size()), v.data(), wire.data());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(wire[i], WireBf16(v[i])) << "value " << v[i];
  EXPECT_EQ(wire[5], 0) << "the wire flushes denormals";
}

TEST(Bf16CopiesTest, UnscalePassesMatchTheFunctionsTheyStandFor) {
  std::vector<float> v;  // values that stay finite in bf16 and after the unscale
  for (float x : Values()) {
    if (std::isfinite(x) && std::abs(x) < 1e30f) v.push_back(x);
  }
  std::vector<float> a = v, b = v;
  EXPECT_TRUE(CpuBackend().UnscaleAndCheckFinite(static_cast<int64_t>(a.size()), 0x1p-4f, a.data()));
  EXPECT_TRUE(UnscaleAndCheckFinitePortable(b.data(), static_cast<int64_t>(b.size()), 0x1p-4f));
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  a[3] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(CpuBackend().UnscaleAndCheckFinite(static_cast<int64_t>(a.size()), 1.0f, a.data()));

  std::vector<uint16_t> wire(v.size());
  ToWireBf16(v.data(), wire.data(), static_cast<int64_t>(v.size()));
  std::vector<float> c(v.size()), d(v.size());
  EXPECT_TRUE(CpuBackend().UnscaleFromBf16AndCheckFinite(static_cast<int64_t>(v.size()), wire.data(), 0.5f, c.data()));
  EXPECT_TRUE(UnscaleFromBf16AndCheckFinitePortable(wire.data(), d.data(), static_cast<int64_t>(v.size()), 0.5f));
  EXPECT_EQ(std::memcmp(c.data(), d.data(), c.size() * sizeof(float)), 0);
}

TEST(Bf16CopiesTest, TheCpuBackendWorksInHostMemoryAndFinishesEachOp) {
  EXPECT_EQ(CpuBackend().device(), Device::kCpu);
  CpuBackend().Synchronize();  // a no-op that must exist
}

}  // namespace
}  // namespace gantry
