#include "worker/monitor/image_grid.h"

#include <png.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

struct Gray {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> pixels;
  uint8_t at(uint32_t x, uint32_t y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// Decodes an 8-bit grayscale PNG with libpng's simplified API.
Gray ReadGrayPng(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  Gray out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return out;
  }
  EXPECT_EQ(image.format, PNG_FORMAT_GRAY) << "not stored as 8-bit grayscale";
  image.format = PNG_FORMAT_GRAY;
  out.width = image.width;
  out.height = image.height;
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << path << ": " << image.message;
  }
  return out;
}

class ImageGridTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/gantry_grid_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ImageGridTest, LaysOutTilesWithGaps) {
  // 5 images of 3x4 in 3 columns: 2 grid rows; width 3*4 + 2*2 = 16, height 2*3 + 2 = 8.
  const int64_t h = 3, w = 4, n = 5;
  std::vector<float> images(n * h * w);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < h * w; ++j) images[i * h * w + j] = -1.0f + 0.5f * static_cast<float>(i);
  }
  images[1 * h * w + 2 * w + 3] = 7.0f;                             // clamps to 255
  images[3 * h * w + 0] = std::numeric_limits<float>::quiet_NaN();  // NaN is black
  const std::string path = dir_ + "/grid.png";
  ASSERT_TRUE(WritePngGrid(path, images.data(), n, h, w, 3).ok());

  const Gray png = ReadGrayPng(path);
  ASSERT_EQ(png.width, 16u);
  ASSERT_EQ(png.height, 8u);
  EXPECT_EQ(png.at(0, 0), 0);              // image 0 at -1
  EXPECT_EQ(png.at(4, 0), kGridGapValue);  // the gap after column 0
  EXPECT_EQ(png.at(5, 1), kGridGapValue);
  EXPECT_EQ(png.at(6, 0), 64);              // image 1 at -0.5: 63.75 rounds to 64
  EXPECT_EQ(png.at(6 + 3, 2), 255);         // the clamped pixel
  EXPECT_EQ(png.at(12, 2), 128);            // image 2 at 0: 127.5 rounds to 128
  EXPECT_EQ(png.at(0, 3), kGridGapValue);   // the gap between grid rows
  EXPECT_EQ(png.at(0, 5), 0);               // image 3's NaN
  EXPECT_EQ(png.at(1, 5), 191);             // image 3 at 0.5: 191.25
  EXPECT_EQ(png.at(6, 7), 255);             // image 4 at 1
  EXPECT_EQ(png.at(12, 6), kGridGapValue);  // the unused last cell
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1) << "a temporary file was left";
}

TEST_F(ImageGridTest, FewerImagesThanColumns) {
  std::vector<float> images(2 * 2 * 2, 1.0f);
  ASSERT_TRUE(WritePngGrid(dir_ + "/g.png", images.data(), 2, 2, 2, 8).ok());
  const Gray png = ReadGrayPng(dir_ + "/g.png");
  EXPECT_EQ(png.width, 6u);
  EXPECT_EQ(png.height, 2u);
}

TEST_F(ImageGridTest, Errors) {
  const float x = 0.0f;
  EXPECT_THAT(std::string(WritePngGrid(dir_ + "/g.png", &x, 0, 1, 1, 1).message()),
              ::testing::HasSubstr("must be positive"));
  const absl::Status no_dir = WritePngGrid(dir_ + "/missing/g.png", &x, 1, 1, 1, 1);
  EXPECT_FALSE(no_dir.ok());
  EXPECT_THAT(std::string(no_dir.message()), ::testing::HasSubstr(dir_ + "/missing/g.png"));
}

}  // namespace
}  // namespace gantry
