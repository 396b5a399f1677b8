#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/cpu/swap_leading_dims.h"

namespace gantry {
namespace {

// Element (i, j, k) of a [a, b, inner] array, coded so that every element is distinct.
float Code(int64_t i, int64_t j, int64_t k) { return static_cast<float>(i * 10000 + j * 100 + k); }

TEST(SwapLeadingDimsTest, MovesEveryRunToItsSwappedPlace) {
  struct Dims {
    int64_t a, b, inner;
  };
  for (const Dims d : {Dims{3, 5, 7}, Dims{1, 4, 2}, Dims{4, 1, 3}, Dims{2, 3, 1}, Dims{64, 128, 49}}) {
    SCOPED_TRACE(::testing::Message() << d.a << "x" << d.b << "x" << d.inner);
    std::vector<float> x(static_cast<size_t>(d.a * d.b * d.inner));
    for (int64_t i = 0; i < d.a; ++i) {
      for (int64_t j = 0; j < d.b; ++j) {
        for (int64_t k = 0; k < d.inner; ++k) {
          x[static_cast<size_t>((i * d.b + j) * d.inner + k)] = Code(i, j, k);
        }
      }
    }
    std::vector<float> y(x.size(), -1.0f);
    SwapLeadingDims(d.a, d.b, d.inner, x.data(), y.data());
    for (int64_t j = 0; j < d.b; ++j) {
      for (int64_t i = 0; i < d.a; ++i) {
        for (int64_t k = 0; k < d.inner; ++k) {
          ASSERT_EQ(y[static_cast<size_t>((j * d.a + i) * d.inner + k)], Code(i, j, k))
              << "i=" << i << " j=" << j << " k=" << k;
        }
      }
    }
  }
}

TEST(SwapLeadingDimsTest, SwappingTwiceRestoresTheInput) {
  std::vector<float> x(6 * 5 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f;
  std::vector<float> swapped(x.size()), back(x.size());
  SwapLeadingDims(6, 5, 4, x.data(), swapped.data());
  SwapLeadingDims(5, 6, 4, swapped.data(), back.data());
  EXPECT_EQ(back, x);
  EXPECT_NE(swapped, x);
}

}  // namespace
}  // namespace gantry
