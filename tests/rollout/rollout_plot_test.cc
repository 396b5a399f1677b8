#include "worker/rollout/rollout_plot.h"

#include <cmath>

#include "common/file_io.h"
#include "gtest/gtest.h"
#include "tests/testing/png_decode.h"
#include "worker/monitor/plot_panel.h"

namespace gantry {
namespace {

std::vector<RolloutStepRow> Rows(int n) {
  std::vector<RolloutStepRow> rows;
  for (int s = 1; s <= n; ++s) {
    RolloutStepRow r;
    r.step = s;
    r.relative_l2 = 0.02 * s;
    r.persistence_relative_l2 = 0.05 * s;
    r.vorticity_correlation = 1.0 - 0.01 * s;  // crosses 0.95 after step 5
    rows.push_back(r);
  }
  return rows;
}

// The topmost row of `colour` in the columns [x0, x1), or -1.
int TopOf(const PlotCanvas& c, Rgb colour, int x0, int x1) {
  for (int y = 0; y < c.height(); ++y) {
    for (int x = x0; x < x1; ++x) {
      if (c.At(x, y) == colour) return y;
    }
  }
  return -1;
}

TEST(RolloutPlot, ErrorsPngDecodesAtItsSize) {
  const std::string path = ::testing::TempDir() + "/errors.png";
  ASSERT_TRUE(WriteRolloutPlot(path, Rows(12), 0.95).ok());
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::optional<testing_png::Decoded> d = testing_png::DecodeRgb(std::string(bytes->begin(), bytes->end()));
  ASSERT_TRUE(d.has_value()) << path << " does not decode as a PNG";
  EXPECT_EQ(d->width, kRolloutPlotWidth);
  EXPECT_EQ(d->height, kRolloutPlotHeight);
}

TEST(RolloutPlot, DrawsBothErrorsAndTheThresholdAcrossTheCorrelationPanel) {
  const PlotCanvas c = DrawRolloutPlot(Rows(12), 0.95);
  const int mid = kRolloutPlotHeight / 2;
  // Persistence's error grows faster: its colour reaches the top of the upper panel,
  // above the model's, at the last step (the right end of the plot).
  const int right = kRolloutPlotWidth - 60;
  const int model_top = TopOf(c, PlotColor(0), right, kRolloutPlotWidth - 30);
  const int persistence_top = TopOf(c, PlotColor(1), right, kRolloutPlotWidth - 30);
  ASSERT_GE(model_top, 0);
  ASSERT_GE(persistence_top, 0);
  EXPECT_LT(persistence_top, model_top);
  EXPECT_LT(persistence_top, mid);
  // The threshold is a red row spanning the lower panel between its axes.
  int threshold_rows = 0;
  for (int y = mid; y < kRolloutPlotHeight; ++y) {
    bool full = true;
    for (int x = 100; x < 700 && full; ++x) full = c.At(x, y) == PlotColor(3) || c.At(x, y) == PlotColor(0);
    threshold_rows += full ? 1 : 0;
  }
  EXPECT_GE(threshold_rows, 1);
}

TEST(RolloutPlot, OneStepOrNoStepsStillDrawAPlot) {
  for (int n : {0, 1}) {
    const PlotCanvas c = DrawRolloutPlot(Rows(n), 0.95);
    EXPECT_EQ(c.width(), kRolloutPlotWidth);
    EXPECT_TRUE(c.EncodePng().ok());
  }
}

}  // namespace
}  // namespace gantry
