#include "worker/monitor/plot_panel.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"

namespace gantry {
namespace {

constexpr Rgb kPalette[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40},
                            {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127}};

}  // namespace

Rgb PlotColor(size_t i) { return kPalette[i % std::size(kPalette)]; }

std::string CompactNumber(double v) {
  const double a = std::abs(v);
  if (a >= 1e6) return absl::StrFormat("%.1fM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%.0fK", v / 1e3);
  if (a >= 100) return absl::StrFormat("%.0f", v);
  if (a >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

void Panel::SetRange(double xmin, double xmax, double ymin, double ymax) {
  if (!(xmax > xmin)) xmax = xmin + 1;
  if (!(ymax > ymin)) {
    const double pad = std::max(1e-3, std::abs(ymin) * 0.1);
    ymin -= pad;
    ymax += pad;
  }
  x0 = xmin, x1 = xmax, y0 = ymin, y1 = ymax;
}

void Panel::DrawFrame(PlotCanvas& c, const std::string& title) const {
  c.Text(left, top - 24, title, kPlotInk, 2);
  for (int i = 0; i <= 4; ++i) {
    const double v = y0 + (y1 - y0) * i / 4.0;
    const int y = static_cast<int>(std::lround(Y(v)));
    c.Fill(left, y, right, y, kPlotGrid);
    const std::string label = CompactNumber(v);
    c.Text(left - 8 - PlotCanvas::TextWidth(label), y - 5, label, kPlotInk, 2);
  }
  c.Fill(left, top, left, bottom, kPlotInk);
  c.Fill(left, bottom, right, bottom, kPlotInk);
}

absl::Status WritePlotFile(const std::string& path, const PlotCanvas& canvas) {
  absl::StatusOr<std::string> png = canvas.EncodePng();
  if (!png.ok()) return absl::Status(png.status().code(), absl::StrCat(path, ": ", png.status().message()));
  return WriteFileAtomically(path, *png);
}

}  // namespace gantry
