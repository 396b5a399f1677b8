#include "worker/monitor/run_plots.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/time_to_target.h"
#include "report/timing_report.h"
#include "worker/monitor/plot_panel.h"

namespace gantry {
namespace {

// One bar of a panel: a batch size and its value, or none (drawn as "NEVER").
struct Bar {
  int64_t batch_size = 0;
  std::optional<double> value;
};

std::vector<Bar> BarsOf(const std::vector<BatchSizeSummary>& s, double BatchSizeSummary::*value) {
  std::vector<Bar> bars;
  for (const BatchSizeSummary& b : s) bars.push_back({b.batch_size, b.*value});
  return bars;
}

std::vector<Bar> BarsOf(const std::vector<TimeToTarget>& times) {
  std::vector<Bar> bars;
  for (const TimeToTarget& t : times) bars.push_back({t.batch_size, t.reached ? std::optional(t.seconds) : std::nullopt});
  return bars;
}

// Bars, one per batch size, with the batch size below and the value on top.
void DrawBars(PlotCanvas& c, Panel p, const std::vector<Bar>& bars, const std::string& title) {
  double top = 0;
  for (const Bar& b : bars) top = std::max(top, b.value.value_or(0));
  p.SetRange(0, static_cast<double>(bars.size()), 0, top > 0 ? top * 1.15 : 1);
  p.DrawFrame(c, title);
  const double slot = static_cast<double>(p.right - p.left) / static_cast<double>(std::max<size_t>(1, bars.size()));
  for (size_t i = 0; i < bars.size(); ++i) {
    const int x0 = p.left + static_cast<int>(slot * (static_cast<double>(i) + 0.2));
    const int x1 = p.left + static_cast<int>(slot * (static_cast<double>(i) + 0.8));
    const int y = bars[i].value ? static_cast<int>(std::lround(p.Y(*bars[i].value))) : p.bottom - 1;
    if (bars[i].value) c.Fill(x0, y, x1, p.bottom - 1, PlotColor(i));
    const std::string label = absl::StrCat(bars[i].batch_size);
    c.Text((x0 + x1 - PlotCanvas::TextWidth(label)) / 2, p.bottom + 8, label, kPlotInk, 2);
    const std::string shown = bars[i].value ? CompactNumber(*bars[i].value) : "NEVER";
    c.Text((x0 + x1 - PlotCanvas::TextWidth(shown)) / 2, y - 14, shown, kPlotInk, 2);
  }
  c.Text((p.left + p.right - PlotCanvas::TextWidth("GLOBAL BATCH")) / 2, p.bottom + 26, "GLOBAL BATCH", kPlotInk, 2);
}

// One smoothed line per series of `pick` (d_loss or g_loss), with a legend.
void DrawLosses(PlotCanvas& c, Panel p, const LossHistory& h, std::vector<double> LossHistory::Series::*pick,
                const std::string& title) {
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  std::vector<std::vector<double>> smooth;
  for (const LossHistory::Series& s : h.series()) {
    const std::vector<double>& values = s.*pick;
    smooth.push_back(Smooth(values, std::clamp(static_cast<double>(values.size()) / 50.0, 1.0, 200.0)));
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(smooth.back()[i])) continue;
      xmin = std::min(xmin, s.steps[i]), xmax = std::max(xmax, s.steps[i]);
      ymin = std::min(ymin, smooth.back()[i]), ymax = std::max(ymax, smooth.back()[i]);
    }
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;  // nothing to draw
  p.SetRange(xmin, xmax, ymin, ymax);
  p.DrawFrame(c, title);
  for (size_t k = 0; k < h.series().size(); ++k) {
    const LossHistory::Series& s = h.series()[k];
    for (size_t i = 1; i < smooth[k].size(); ++i) {
      c.Line(p.X(s.steps[i - 1]), p.Y(smooth[k][i - 1]), p.X(s.steps[i]), p.Y(smooth[k][i]), PlotColor(k), 2);
    }
    const std::string label = absl::StrCat("B", s.batch_size);
    const int lx = p.right - 90, ly = p.top + 6 + static_cast<int>(k) * 16;
    c.Fill(lx, ly + 3, lx + 16, ly + 6, PlotColor(k));
    c.Text(lx + 22, ly, label, kPlotInk, 2);
  }
  const std::string x_label = absl::StrFormat("STEP %.0f TO %.0f", xmin, xmax);
  c.Text((p.left + p.right - PlotCanvas::TextWidth(x_label)) / 2, p.bottom + 8, x_label, kPlotInk, 2);
}


}  // namespace

void LossHistory::StartBatchSize(int64_t batch_size) {
  for (size_t i = 0; i < series_.size(); ++i) {
    if (series_[i].batch_size == batch_size) {
      current_ = i;
      return;
    }
  }
  Series fresh;
  fresh.batch_size = batch_size;
  series_.push_back(std::move(fresh));
  current_ = series_.size() - 1;
}

void LossHistory::Add(int64_t step, double d_loss, double g_loss) {
  if (series_.empty()) StartBatchSize(0);
  Series& s = series_[current_];
  s.steps.push_back(static_cast<double>(step));
  s.d_loss.push_back(d_loss);
  s.g_loss.push_back(g_loss);
}

std::vector<double> Smooth(const std::vector<double>& values, double window) {
  const double keep = 1.0 - 1.0 / std::max(1.0, window);
  std::vector<double> out;
  double ema = 0, weight = 0;
  for (double v : values) {
    ema = keep * ema + (1.0 - keep) * v;
    weight = keep * weight + (1.0 - keep);
    out.push_back(ema / weight);
  }
  return out;
}

PlotCanvas DrawTimingPlot(const std::vector<EpochRow>& rows, const std::optional<QualityGoal>& goal) {
  PlotCanvas c(kTimingPlotWidth, kTimingPlotHeight);
  const std::vector<BatchSizeSummary> s = SummarizeByBatchSize(rows);
  std::vector<std::pair<std::vector<Bar>, std::string>> panels = {
      {BarsOf(s, &BatchSizeSummary::samples_per_s), "SAMPLES/S (STEADY, MEAN OF EPOCHS)"},
      {BarsOf(s, &BatchSizeSummary::seconds_per_epoch), "SECONDS PER EPOCH"}};
  if (goal) panels.push_back({BarsOf(TimesToTarget(rows, *goal)), "SECONDS TO THE QUALITY TARGET"});
  const int width = kTimingPlotWidth / static_cast<int>(panels.size());
  for (size_t i = 0; i < panels.size(); ++i) {
    const int left = static_cast<int>(i) * width;
    DrawBars(c, Panel{left + 90, 50, left + width - 30, kTimingPlotHeight - 60}, panels[i].first, panels[i].second);
  }
  return c;
}

PlotCanvas DrawLossPlot(const LossHistory& history) {
  PlotCanvas c(kLossPlotWidth, kLossPlotHeight);
  const int mid = kLossPlotHeight / 2;
  DrawLosses(c, Panel{90, 40, kLossPlotWidth - 30, mid - 40}, history, &LossHistory::Series::d_loss,
             "D LOSS PER STEP (SMOOTHED)");
  DrawLosses(c, Panel{90, mid + 40, kLossPlotWidth - 30, kLossPlotHeight - 40}, history,
             &LossHistory::Series::g_loss, "G LOSS PER STEP (SMOOTHED)");
  return c;
}

absl::Status WriteTimingPlot(const std::string& path, const std::vector<EpochRow>& rows,
                             const std::optional<QualityGoal>& goal) {
  return WritePlotFile(path, DrawTimingPlot(rows, goal));
}

absl::Status WriteLossPlot(const std::string& path, const LossHistory& history) {
  return WritePlotFile(path, DrawLossPlot(history));
}

}  // namespace gantry
