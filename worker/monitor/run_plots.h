// The run's two plots, written to the run folder when a run ends:
//   timing.png  per global batch size: mean samples/s and mean seconds per epoch (bars),
//               the comparison of the paper's batch-size table at a glance;
//   losses.png  D and G loss per step, smoothed, one line per batch size.
// Drawn on PlotCanvas (plot_canvas.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "report/epoch_metrics.h"
#include "report/time_to_target.h"
#include "worker/monitor/plot_canvas.h"

namespace gantry {

// The per-step losses of the batch sizes trained by this process, in order.
class LossHistory {
 public:
  struct Series {
    int64_t batch_size = 0;
    std::vector<double> steps, d_loss, g_loss;
  };
  // Later Add()s go to a series of this batch size (a new one, or its existing one).
  void StartBatchSize(int64_t batch_size);
  void Add(int64_t step, double d_loss, double g_loss);
  const std::vector<Series>& series() const { return series_; }

 private:
  std::vector<Series> series_;
  size_t current_ = 0;
};

// Exponential moving average of `values` over about `window` points, debiased so the
// first values are not pulled towards 0 (TensorBoard's smoothing, weight 1 - 1/window).
std::vector<double> Smooth(const std::vector<double>& values, double window);

inline constexpr int kTimingPlotWidth = 960, kTimingPlotHeight = 420;
inline constexpr int kLossPlotWidth = 960, kLossPlotHeight = 620;

// Samples/s and seconds per epoch by batch size, and with a `goal` the seconds to it.
PlotCanvas DrawTimingPlot(const std::vector<EpochRow>& rows, const std::optional<QualityGoal>& goal = std::nullopt);
PlotCanvas DrawLossPlot(const LossHistory& history);

// Draw and write the PNG atomically; errors name the path.
absl::Status WriteTimingPlot(const std::string& path, const std::vector<EpochRow>& rows,
                             const std::optional<QualityGoal>& goal = std::nullopt);
absl::Status WriteLossPlot(const std::string& path, const LossHistory& history);

}  // namespace gantry
