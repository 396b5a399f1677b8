#include "worker/rollout/rollout_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "worker/monitor/plot_panel.h"

namespace gantry {
namespace {

// The threshold line's colour: the palette's red.
constexpr size_t kThresholdColor = 3;

struct Series {
  std::string label;
  std::vector<double> values;  // one per row
  Rgb color;
};

// Points and the lines between neighbours that are both finite.
void DrawSeries(PlotCanvas& c, const Panel& p, const std::vector<double>& steps, const Series& s) {
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isfinite(s.values[i])) continue;
    const double x = p.X(steps[i]), y = p.Y(s.values[i]);
    c.Fill(static_cast<int>(x) - 2, static_cast<int>(y) - 2, static_cast<int>(x) + 2, static_cast<int>(y) + 2, s.color);
    if (i > 0 && std::isfinite(s.values[i - 1])) c.Line(p.X(steps[i - 1]), p.Y(s.values[i - 1]), x, y, s.color, 2);
  }
}

// On the title's row, right-aligned, so no value hides behind it.
void DrawLegend(PlotCanvas& c, const Panel& p, const std::vector<Series>& series) {
  int x = p.right;
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    x -= PlotCanvas::TextWidth(it->label) + 22;
    c.Fill(x, p.top - 21, x + 16, p.top - 18, it->color);
    c.Text(x + 22, p.top - 24, it->label, kPlotInk, 2);
    x -= 24;
  }
}

// The finite range of every series, widened by `extra` values (a threshold to show).
std::pair<double, double> Range(const std::vector<Series>& series, std::vector<double> extra) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : series) extra.insert(extra.end(), s.values.begin(), s.values.end());
  for (double v : extra) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) return {0, 1};
  return {lo, hi};
}

// A horizontal line across a panel, under its series.
struct Guide {
  double y;
  Rgb color;
};

void DrawPanel(PlotCanvas& c, Panel p, const std::vector<double>& steps, const std::vector<Series>& series,
               std::pair<double, double> y, const std::string& title, std::optional<Guide> guide = std::nullopt) {
  // Room above and below the values, except below a floor of 0 (errors are never negative).
  const double pad = 0.05 * (y.second - y.first);
  p.SetRange(steps.empty() ? 1 : steps.front(), steps.empty() ? 1 : steps.back(), y.first == 0 ? 0 : y.first - pad,
             y.second + pad);
  p.DrawFrame(c, title);
  if (guide) {
    const int gy = static_cast<int>(std::lround(p.Y(guide->y)));
    c.Fill(p.left + 1, gy - 1, p.right, gy, guide->color);
  }
  for (const Series& s : series) DrawSeries(c, p, steps, s);
  DrawLegend(c, p, series);
  const std::string x_label =
      steps.empty() ? "NO STEPS" : absl::StrFormat("MODEL STEP %.0f TO %.0f", steps.front(), steps.back());
  c.Text((p.left + p.right - PlotCanvas::TextWidth(x_label)) / 2, p.bottom + 8, x_label, kPlotInk, 2);
}

}  // namespace

PlotCanvas DrawRolloutPlot(const std::vector<RolloutStepRow>& rows, double threshold) {
  PlotCanvas c(kRolloutPlotWidth, kRolloutPlotHeight);
  std::vector<double> steps;
  Series model{"MODEL", {}, PlotColor(0)}, persistence{"COPY OF THE START FRAME", {}, PlotColor(1)};
  Series correlation{"MODEL", {}, PlotColor(0)};
  for (const RolloutStepRow& r : rows) {
    steps.push_back(static_cast<double>(r.step));
    model.values.push_back(r.relative_l2);
    persistence.values.push_back(r.persistence_relative_l2);
    correlation.values.push_back(r.vorticity_correlation);
  }
  const int mid = kRolloutPlotHeight / 2;
  const std::vector<Series> errors = {model, persistence};
  const std::pair<double, double> error_range = Range(errors, {0.0});
  DrawPanel(c, Panel{90, 40, kRolloutPlotWidth - 30, mid - 40}, steps, errors, error_range,
            "RELATIVE L2 VS THE LBM TRUTH PER STEP");

  const Series threshold_line{absl::StrFormat("THRESHOLD %.2f", threshold), {}, PlotColor(kThresholdColor)};
  DrawPanel(c, Panel{90, mid + 40, kRolloutPlotWidth - 30, kRolloutPlotHeight - 40}, steps,
            {correlation, threshold_line}, Range({correlation}, {threshold, 1.0}), "VORTICITY CORRELATION PER STEP",
            Guide{threshold, threshold_line.color});
  return c;
}

absl::Status WriteRolloutPlot(const std::string& path, const std::vector<RolloutStepRow>& rows, double threshold) {
  return WritePlotFile(path, DrawRolloutPlot(rows, threshold));
}

}  // namespace gantry
