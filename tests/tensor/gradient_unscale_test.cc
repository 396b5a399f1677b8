#include "worker/tensor/cpu/gradient_unscale.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/bf16_wire.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kInvScale = 0x1p-16f;

std::vector<float> Gradients(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  Rng rng(seed);
  for (float& x : v) x = static_cast<float>(rng.Normal() * 65536.0);
  return v;
}

using Fp32Pass = bool (*)(float*, int64_t, float);
using Bf16Pass = bool (*)(const uint16_t*, float*, int64_t, float);

struct Fp32Case { const char* name; Fp32Pass pass; };
struct Bf16Case { const char* name; Bf16Pass pass; };

const Fp32Case kFp32[] = {{"dispatched", &UnscaleAndCheckFinite}, {"portable", &UnscaleAndCheckFinitePortable}};
const Bf16Case kBf16[] = {{"dispatched", &UnscaleFromBf16AndCheckFinite},
                          {"portable", &UnscaleFromBf16AndCheckFinitePortable}};

TEST(UnscaleAndCheckFinite, MultipliesEveryElementAndReportsFiniteAtEveryLength) {
  for (const Fp32Case& c : kFp32) {
    for (int64_t n : {0, 1, 15, 16, 17, 33, 100003}) {
      std::vector<float> g = Gradients(n + 3, 1);
      const std::vector<float> before = g;
      EXPECT_TRUE(c.pass(g.data(), n, kInvScale)) << c.name << " n " << n;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(g[i], before[i] * kInvScale) << c.name << " i " << i;
      for (int64_t i = n; i < n + 3; ++i) ASSERT_EQ(g[i], before[i]) << c.name << ": wrote past the end";
    }
  }
}

TEST(UnscaleAndCheckFinite, FindsOneInfOrNanAnywhere) {
  for (const Fp32Case& c : kFp32) {
    for (float poison : {kInfinity, -kInfinity, std::nanf("")}) {
      for (int64_t n : {1, 16, 37}) {
        for (int64_t at = 0; at < n; ++at) {
          std::vector<float> g = Gradients(n, 2);
          g[at] = poison;
          ASSERT_FALSE(c.pass(g.data(), n, kInvScale)) << c.name << " " << poison << " at " << at << " of " << n;
        }
      }
    }
    // Past the end does not count.
    std::vector<float> g = Gradients(20, 3);
    g[17] = kInfinity;
    EXPECT_TRUE(c.pass(g.data(), 17, kInvScale)) << c.name;
    // A finite value that the unscale overflows (a scale below 1) is not finite either.
    std::vector<float> big(5, std::numeric_limits<float>::max() / 2);
    EXPECT_FALSE(c.pass(big.data(), 5, 4.0f)) << c.name;
  }
}

TEST(UnscaleFromBf16AndCheckFinite, ConvertsExactlyAndFindsNonFiniteValues) {
  for (const Bf16Case& c : kBf16) {
    for (int64_t n : {0, 1, 15, 16, 17, 100003}) {
      const std::vector<float> source = Gradients(n + 3, 4);
      std::vector<uint16_t> wire(source.size());
      ToWireBf16(source.data(), wire.data(), n + 3);
      std::vector<float> g(wire.size(), -7.0f);
      EXPECT_TRUE(c.pass(wire.data(), g.data(), n, kInvScale)) << c.name << " n " << n;
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(g[i], Bf16ToFloat(wire[i]) * kInvScale) << c.name << " i " << i;
      for (int64_t i = n; i < n + 3; ++i) ASSERT_EQ(g[i], -7.0f) << c.name << ": wrote past the end";
    }
    for (uint16_t poison : {uint16_t{0x7f80}, uint16_t{0xff80}, kWireNan, uint16_t{0xffc1}}) {
      for (int64_t at : {0, 15, 16, 30}) {
        std::vector<uint16_t> wire(31, 0x3f80);
        wire[at] = poison;
        std::vector<float> g(31);
        ASSERT_FALSE(c.pass(wire.data(), g.data(), 31, kInvScale)) << c.name << " " << poison << " at " << at;
      }
    }
  }
}

}  // namespace
}  // namespace gantry
