#include "worker/monitor/run_plots.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "common/file_io.h"
#include "gtest/gtest.h"
#include "tests/testing/png_decode.h"

namespace gantry {
namespace {

// Distinct colours in the image: a blank or single-colour plot has 1 or 2.
size_t DistinctColours(const testing_png::Decoded& d) {
  std::set<uint32_t> colours;
  for (size_t i = 0; i + 2 < d.rgb.size(); i += 3) colours.insert(d.rgb[i] << 16 | d.rgb[i + 1] << 8 | d.rgb[i + 2]);
  return colours.size();
}

testing_png::Decoded ReadPng(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  std::optional<testing_png::Decoded> d = testing_png::DecodeRgb(std::string(bytes->begin(), bytes->end()));
  EXPECT_TRUE(d.has_value()) << path << " does not decode";
  return d.value_or(testing_png::Decoded{});
}

EpochRow Row(int64_t batch, int64_t epoch, double seconds, double samples_per_s) {
  EpochRow r;
  r.batch_size = batch;
  r.epoch = epoch;
  r.seconds = seconds;
  r.samples_per_s = samples_per_s;
  return r;
}

TEST(RunPlots, TimingPlotDecodesAtItsSizeWithABarPerBatchSize) {
  const std::string path = ::testing::TempDir() + "/timing.png";
  ASSERT_TRUE(WriteTimingPlot(path, {Row(64, 1, 100, 600), Row(64, 2, 90, 650), Row(512, 1, 20, 3000)}).ok());
  const testing_png::Decoded d = ReadPng(path);
  EXPECT_EQ(d.width, kTimingPlotWidth);
  EXPECT_EQ(d.height, kTimingPlotHeight);
  // White, ink, grid and the two bar colours at least.
  EXPECT_GE(DistinctColours(d), 5u);

  // The batch-512 bar of samples/s is the tallest: its colour reaches higher up the left
  // panel than batch 64's.
  const PlotCanvas c = DrawTimingPlot({Row(64, 1, 100, 600), Row(512, 1, 20, 3000)});
  auto top_of = [&](Rgb colour) {
    for (int y = 0; y < c.height(); ++y) {
      for (int x = 0; x < c.width() / 2; ++x) {
        if (c.At(x, y) == colour) return y;
      }
    }
    return c.height();
  };
  EXPECT_LT(top_of({255, 127, 14}), top_of({31, 119, 180}));
}

TEST(RunPlots, LossPlotDrawsASmoothedLinePerBatchSize) {
  LossHistory h;
  h.StartBatchSize(64);
  for (int s = 1; s <= 500; ++s) h.Add(s, 1.4 - 0.001 * s + 0.2 * std::sin(s), 0.7 + 0.002 * s);
  h.StartBatchSize(512);
  for (int s = 1; s <= 60; ++s) h.Add(s, 1.0, 2.0 - 0.01 * s);
  ASSERT_EQ(h.series().size(), 2u);
  EXPECT_EQ(h.series()[1].steps.size(), 60u);

  const std::string path = ::testing::TempDir() + "/losses.png";
  ASSERT_TRUE(WriteLossPlot(path, h).ok());
  const testing_png::Decoded d = ReadPng(path);
  EXPECT_EQ(d.width, kLossPlotWidth);
  EXPECT_EQ(d.height, kLossPlotHeight);
  size_t blue = 0, orange = 0;
  for (size_t i = 0; i + 2 < d.rgb.size(); i += 3) {
    blue += d.rgb[i] == 31 && d.rgb[i + 1] == 119 && d.rgb[i + 2] == 180;
    orange += d.rgb[i] == 255 && d.rgb[i + 1] == 127 && d.rgb[i + 2] == 14;
  }
  EXPECT_GT(blue, 1000u);   // two long lines (D and G) of batch 64
  EXPECT_GT(orange, 500u);  // and of batch 512
}

TEST(RunPlots, AnEmptyRunStillGivesValidPlots) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(WriteTimingPlot(dir + "/empty_timing.png", {}).ok());
  ASSERT_TRUE(WriteLossPlot(dir + "/empty_losses.png", LossHistory{}).ok());
  EXPECT_EQ(ReadPng(dir + "/empty_losses.png").width, kLossPlotWidth);
}

TEST(RunPlots, SmoothingIsDebiasedAndFollowsTheData) {
  for (double v : Smooth({5, 5, 5}, 10)) EXPECT_NEAR(v, 5.0, 1e-12);  // no pull towards 0
  const std::vector<double> s = Smooth({0, 10}, 2);                  // weight 0.5
  EXPECT_DOUBLE_EQ(s[0], 0);
  EXPECT_DOUBLE_EQ(s[1], (0.5 * 0.5 * 0 + 0.5 * 10) / (0.5 * 0.5 + 0.5));
  const std::vector<double> same = Smooth({1, 2, 3}, 1);  // window 1: the data
  ASSERT_EQ(same.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(same[i], static_cast<double>(i + 1), 1e-12);
}

TEST(PlotCanvas, TextAndLinesLandWhereAsked) {
  PlotCanvas c(40, 20);
  c.Text(1, 1, "1", {0, 0, 0}, 1);  // '1': ".#." on its top row
  EXPECT_EQ(c.At(2, 1), (Rgb{0, 0, 0}));
  EXPECT_EQ(c.At(1, 1), (Rgb{255, 255, 255}));
  c.Line(0, 15, 39, 15, {255, 0, 0}, 1);
  for (int x = 0; x < 40; ++x) EXPECT_EQ(c.At(x, 15), (Rgb{255, 0, 0}));
  c.Line(-100, -100, 1000, 1000, {0, 255, 0}, 3);  // clipped, no crash
}

}  // namespace
}  // namespace gantry
