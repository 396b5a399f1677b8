// The pieces the run's plots share (run_plots.h, rollout_plot.h): a plotting area of a
// PlotCanvas with its data range, short axis labels, and the colours.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "worker/monitor/plot_canvas.h"

namespace gantry {

inline constexpr Rgb kPlotInk{40, 40, 40};
inline constexpr Rgb kPlotGrid{225, 225, 225};

// Distinguishable line and bar colours, the i-th in turn.
Rgb PlotColor(size_t i);

// Short labels for axis numbers: 1234567 -> "1.2M", 45678 -> "46K", 0.5 -> "0.50".
std::string CompactNumber(double v);

// A plotting area of the canvas and the data range it shows.
struct Panel {
  int left, top, right, bottom;  // pixels, inclusive
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;

  double X(double x) const { return left + (x - x0) / (x1 - x0) * (right - left); }
  double Y(double y) const { return bottom - (y - y0) / (y1 - y0) * (bottom - top); }

  // Widens a degenerate range so the mapping stays defined.
  void SetRange(double xmin, double xmax, double ymin, double ymax);

  // Title above, horizontal grid lines with y labels at five levels, a frame.
  void DrawFrame(PlotCanvas& c, const std::string& title) const;
};

// The canvas as a PNG at `path`, written atomically; errors name the path.
absl::Status WritePlotFile(const std::string& path, const PlotCanvas& canvas);

}  // namespace gantry
