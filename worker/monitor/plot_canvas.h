// A small RGB raster for the run's plots (run_plots.h): filled rectangles, thick lines
// and text in a built-in 3x5 pixel font (upper-case letters, digits and a few signs,
// scaled up), encoded as PNG. Deliberately tiny: the plots need axes, bars, lines and
// labels, and the worker already links libpng, so no plotting library is added.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

class PlotCanvas {
 public:
  // A width x height canvas filled with `background`.
  PlotCanvas(int width, int height, Rgb background = {255, 255, 255});

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb At(int x, int y) const;
  // Pixels outside the canvas are clipped.
  void Fill(int x0, int y0, int x1, int y1, Rgb color);  // inclusive corners, any order
  void Line(double x0, double y0, double x1, double y1, Rgb color, int thickness = 2);
  // Text with its top-left corner at (x, y), each font pixel `scale` x `scale`;
  // lower-case letters are drawn as upper-case, characters the font lacks as blanks.
  void Text(int x, int y, const std::string& text, Rgb color, int scale = 2);
  static int TextWidth(const std::string& text, int scale = 2) { return static_cast<int>(text.size()) * 4 * scale; }
  static int TextHeight(int scale = 2) { return 5 * scale; }

  // The canvas as an RGB PNG file's bytes.
  absl::StatusOr<std::string> EncodePng() const;

 private:
  int width_, height_;
  std::vector<uint8_t> rgb_;
};

}  // namespace gantry
