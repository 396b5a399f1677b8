#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/cpu/conv_lowering.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Random(int64_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = static_cast<float>(2.0 * rng.Uniform() - 1.0);
  return v;
}

// A Conv2d-style geometry: out = (size + 2p - k) / s + 1.
ConvGeometry ConvSide(int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p) {
  return {c, h, w, k, s, p, (h + 2 * p - k) / s + 1, (w + 2 * p - k) / s + 1};
}

// Straight from the ConvGeometry comment in conv_lowering.h.
std::vector<float> NaiveIm2Col(const ConvGeometry& g, const std::vector<float>& image) {
  std::vector<float> cols(static_cast<size_t>(g.col_rows() * g.col_cols()), 0.0f);
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t ky = 0; ky < g.kernel; ++ky) {
      for (int64_t kx = 0; kx < g.kernel; ++kx) {
        const int64_t row = (c * g.kernel + ky) * g.kernel + kx;
        for (int64_t oy = 0; oy < g.out_height; ++oy) {
          for (int64_t ox = 0; ox < g.out_width; ++ox) {
            const int64_t iy = oy * g.stride - g.padding + ky, ix = ox * g.stride - g.padding + kx;
            const bool inside = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
            cols[static_cast<size_t>(row * g.col_cols() + oy * g.out_width + ox)] =
                inside ? image[static_cast<size_t>((c * g.height + iy) * g.width + ix)] : 0.0f;
          }
        }
      }
    }
  }
  return cols;
}

std::vector<ConvGeometry> Geometries() {
  std::vector<ConvGeometry> gs = {
      ConvSide(1, 5, 5, 3, 1, 0), ConvSide(2, 6, 7, 3, 1, 1),   ConvSide(3, 7, 6, 3, 2, 1),
      ConvSide(2, 8, 8, 5, 2, 2), ConvSide(1, 9, 5, 4, 3, 2),   ConvSide(2, 4, 4, 1, 1, 0),
      ConvSide(1, 3, 3, 5, 1, 2), ConvSide(1, 28, 28, 5, 2, 2),
  };
  // ConvTranspose2d-style: the image (the layer's output) is larger than the column
  // side covers (output padding), 7x7 -> 14x14 with k5 s2 p2 op1.
  gs.push_back({2, 14, 14, 5, 2, 2, 7, 7});
  // Column positions that miss the image entirely (padding >= kernel).
  gs.push_back({1, 3, 4, 2, 1, 3, 8, 9});
  return gs;
}

std::string Describe(const ConvGeometry& g) {
  return "c=" + std::to_string(g.channels) + " " + std::to_string(g.height) + "x" + std::to_string(g.width) +
         " k=" + std::to_string(g.kernel) + " s=" + std::to_string(g.stride) +
         " p=" + std::to_string(g.padding) + " out=" + std::to_string(g.out_height) + "x" +
         std::to_string(g.out_width);
}

TEST(ConvLoweringTest, Im2ColMatchesDefinition) {
  for (const ConvGeometry& g : Geometries()) {
    SCOPED_TRACE(Describe(g));
    const std::vector<float> image = Random(g.channels * g.height * g.width, 11);
    const std::vector<float> expected = NaiveIm2Col(g, image);
    // Garbage in the output must be overwritten, zeros for the padding included.
    std::vector<float> cols(expected.size(), 123.0f);
    Im2Col(g, image.data(), cols.data());
    for (size_t i = 0; i < cols.size(); ++i) ASSERT_EQ(cols[i], expected[i]) << "at " << i;
  }
}

TEST(ConvLoweringTest, Col2ImIsTheAdjointOfIm2Col) {
  for (const ConvGeometry& g : Geometries()) {
    SCOPED_TRACE(Describe(g));
    const int64_t image_size = g.channels * g.height * g.width;
    const std::vector<float> x = Random(image_size, 21);
    const std::vector<float> c = Random(g.col_rows() * g.col_cols(), 22);
    std::vector<float> im2col_x(c.size());
    Im2Col(g, x.data(), im2col_x.data());
    std::vector<float> col2im_c(static_cast<size_t>(image_size), 0.0f);
    Col2Im(g, c.data(), col2im_c.data());
    double lhs = 0.0, rhs = 0.0;
    for (size_t i = 0; i < c.size(); ++i) lhs += static_cast<double>(im2col_x[i]) * c[i];
    for (size_t i = 0; i < x.size(); ++i) rhs += static_cast<double>(x[i]) * col2im_c[i];
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1.0 + std::abs(lhs)));
  }
}

TEST(ConvLoweringTest, Col2ImMatchesScatterAndAccumulates) {
  for (const ConvGeometry& g : Geometries()) {
    SCOPED_TRACE(Describe(g));
    const int64_t image_size = g.channels * g.height * g.width;
    const std::vector<float> c = Random(g.col_rows() * g.col_cols(), 31);
    const std::vector<float> start = Random(image_size, 32);
    // Col2Im's entry for pixel j is the sum of c over the column slots that Im2Col
    // fills from j: probe each pixel with a one-hot image.
    std::vector<float> expected = start;
    std::vector<float> onehot(static_cast<size_t>(image_size), 0.0f);
    for (int64_t j = 0; j < image_size; ++j) {
      onehot[static_cast<size_t>(j)] = 1.0f;
      const std::vector<float> slots = NaiveIm2Col(g, onehot);
      onehot[static_cast<size_t>(j)] = 0.0f;
      double sum = 0.0;
      for (size_t i = 0; i < slots.size(); ++i) sum += static_cast<double>(slots[i]) * c[i];
      expected[static_cast<size_t>(j)] += static_cast<float>(sum);
    }
    std::vector<float> image = start;
    Col2Im(g, c.data(), image.data());
    for (size_t i = 0; i < image.size(); ++i) ASSERT_NEAR(image[i], expected[i], 1e-5) << "at " << i;
  }
}

// A block of `pad` extra columns on each side of every row: the strided layout a
// batched lowering writes one sample's columns into.
constexpr int64_t kPad = 3;

TEST(ConvLoweringTest, StridedIm2ColFillsOnlyItsBlock) {
  for (ConvGeometry g : Geometries()) {
    SCOPED_TRACE(Describe(g));
    const std::vector<float> image = Random(g.channels * g.height * g.width, 41);
    const std::vector<float> dense = NaiveIm2Col(g, image);
    const int64_t pixels = g.col_cols();
    g.cols_stride = pixels + 2 * kPad;
    std::vector<float> wide(static_cast<size_t>(g.col_rows() * g.cols_stride), 123.0f);
    Im2Col(g, image.data(), wide.data() + kPad);
    for (int64_t r = 0; r < g.col_rows(); ++r) {
      for (int64_t j = 0; j < g.cols_stride; ++j) {
        const float got = wide[static_cast<size_t>(r * g.cols_stride + j)];
        const bool inside = j >= kPad && j < kPad + pixels;
        const float want = inside ? dense[static_cast<size_t>(r * pixels + j - kPad)] : 123.0f;
        ASSERT_EQ(got, want) << "row " << r << " column " << j;
      }
    }
  }
}

TEST(ConvLoweringTest, StridedCol2ImReadsOnlyItsBlock) {
  for (ConvGeometry g : Geometries()) {
    SCOPED_TRACE(Describe(g));
    const int64_t image_size = g.channels * g.height * g.width, pixels = g.col_cols();
    const std::vector<float> dense = Random(g.col_rows() * pixels, 51);
    const std::vector<float> start = Random(image_size, 52);
    std::vector<float> expected = start;
    Col2Im(g, dense.data(), expected.data());
    // The same columns inside NaN padding: reading any padding element poisons the image.
    g.cols_stride = pixels + 2 * kPad;
    std::vector<float> wide(static_cast<size_t>(g.col_rows() * g.cols_stride), std::nanf(""));
    for (int64_t r = 0; r < g.col_rows(); ++r) {
      std::copy_n(dense.begin() + r * pixels, pixels, wide.begin() + r * g.cols_stride + kPad);
    }
    std::vector<float> image = start;
    Col2Im(g, wide.data() + kPad, image.data());
    for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(image[i], expected[i]) << "at " << i;
  }
}

}  // namespace
}  // namespace gantry
