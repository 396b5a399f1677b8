// The per-channel affine kernel of the reference CPU backend against a naive loop.
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Uniform(int64_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.Uniform());
  return v;
}

// y[i, ch, k] = x[i, ch, k] * scale[ch] + shift[ch], element by element.
std::vector<float> NaiveAffine(int64_t n, int64_t c, int64_t hw, const std::vector<float>& x,
                               const std::vector<float>& scale, const std::vector<float>& shift) {
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < hw; ++k) {
        const int64_t j = (i * c + ch) * hw + k;
        y[j] = x[j] * scale[ch] + shift[ch];
      }
  return y;
}

TEST(ChannelAffineKernelTest, MatchesNaiveLoopFor1dAnd2dLayouts) {
  for (int64_t hw : {1, 7, 16}) {
    SCOPED_TRACE(hw);
    const int64_t n = 3, c = 5;
    const std::vector<float> x = Uniform(n * c * hw, 1, -2.0f, 2.0f);
    const std::vector<float> scale = Uniform(c, 2, -1.5f, 1.5f), shift = Uniform(c, 3, -1.0f, 1.0f);
    std::vector<float> y(x.size(), -99.0f);  // overwritten, not accumulated
    CpuBackend().ChannelAffine(n, c, hw, x.data(), scale.data(), shift.data(), y.data());
    EXPECT_EQ(y, NaiveAffine(n, c, hw, x, scale, shift));
  }
}

TEST(ChannelAffineKernelTest, WorksInPlace) {
  for (int64_t hw : {1, 9}) {
    SCOPED_TRACE(hw);
    const int64_t n = 4, c = 3;
    const std::vector<float> x = Uniform(n * c * hw, 4, -3.0f, 3.0f);
    const std::vector<float> scale = Uniform(c, 5, 0.5f, 2.0f), shift = Uniform(c, 6, -1.0f, 1.0f);
    std::vector<float> y = x;
    CpuBackend().ChannelAffine(n, c, hw, y.data(), scale.data(), shift.data(), y.data());
    EXPECT_EQ(y, NaiveAffine(n, c, hw, x, scale, shift));
  }
}

TEST(ChannelAffineKernelTest, ChannelsUseTheirOwnCoefficients) {
  // [2, 2, 2]: channel 0 doubles and adds 1; channel 1 zeroes and adds -3.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> scale = {2, 0}, shift = {1, -3};
  std::vector<float> y(8);
  CpuBackend().ChannelAffine(2, 2, 2, x.data(), scale.data(), shift.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{3, 5, -3, -3, 11, 13, -3, -3}));
}

}  // namespace
}  // namespace gantry
