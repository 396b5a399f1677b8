#include "worker/monitor/flow_strip.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using Pixel = std::array<uint8_t, 3>;

TEST(DivergingColour, BlueThroughWhiteToRed) {
  EXPECT_EQ(DivergingColour(0.0f, 0.1f), (Pixel{255, 255, 255}));
  EXPECT_EQ(DivergingColour(0.1f, 0.1f), (Pixel{255, 0, 0}));
  EXPECT_EQ(DivergingColour(-0.1f, 0.1f), (Pixel{0, 0, 255}));
  EXPECT_EQ(DivergingColour(5.0f, 0.1f), (Pixel{255, 0, 0}));  // clamped
  EXPECT_EQ(DivergingColour(0.05f, 0.1f), (Pixel{255, 128, 128}));
  EXPECT_EQ(DivergingColour(std::numeric_limits<float>::quiet_NaN(), 0.1f), (Pixel{0, 0, 0}));
}

uint32_t BigEndian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

TEST(WriteFieldStrip, LaysOutRowsAndColumnsWithGaps) {
  const std::string path = ::testing::TempDir() + "/gantry_strip.png";
  std::vector<float> a(6 * 10, 0.1f), b(6 * 10, -0.1f);
  ASSERT_TRUE(WriteFieldStrip(path, {a.data(), b.data(), a.data(), b.data(), a.data(), b.data()}, 2, 3, 6, 10, 0.1f).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string png((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_EQ(BigEndian(png, 16), 3u * 10 + 2 * 2);  // width
  EXPECT_EQ(BigEndian(png, 20), 2u * 6 + 2);       // height
  EXPECT_EQ(static_cast<uint8_t>(png[25]), 2);     // colour type RGB
  std::filesystem::remove(path);
  EXPECT_FALSE(WriteFieldStrip(path, {a.data()}, 2, 3, 6, 10, 0.1f).ok());
}

}  // namespace
}  // namespace gantry
