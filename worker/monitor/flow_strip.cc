#include "worker/monitor/flow_strip.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "worker/monitor/image_grid.h"

namespace gantry {

std::array<uint8_t, 3> DivergingColour(float v, float limit) {
  if (std::isnan(v)) return {0, 0, 0};
  const float x = limit > 0 ? std::clamp(v / limit, -1.0f, 1.0f) : 0.0f;
  const auto fade = static_cast<uint8_t>(std::lround(255.0f * (1.0f - std::abs(x))));
  if (x >= 0) return {255, fade, fade};  // white -> red
  return {fade, fade, 255};              // white -> blue
}

absl::Status WriteFieldStrip(const std::string& path, const std::vector<const float*>& fields, int64_t rows,
                             int64_t columns, int64_t height, int64_t width, float limit) {
  if (rows < 1 || columns < 1 || static_cast<int64_t>(fields.size()) != rows * columns) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", fields.size(), " fields do not fill ", rows, " rows of ",
                                                   columns));
  }
  const int64_t canvas_w = columns * width + (columns - 1) * kGridGap;
  const int64_t canvas_h = rows * height + (rows - 1) * kGridGap;
  std::vector<uint8_t> rgb(static_cast<size_t>(canvas_w * canvas_h * 3), kGridGapValue);
  for (int64_t i = 0; i < rows * columns; ++i) {
    const int64_t x0 = (i % columns) * (width + kGridGap);
    const int64_t y0 = (i / columns) * (height + kGridGap);
    for (int64_t y = 0; y < height; ++y) {
      uint8_t* out = rgb.data() + ((y0 + y) * canvas_w + x0) * 3;
      for (int64_t x = 0; x < width; ++x) {
        const std::array<uint8_t, 3> c = DivergingColour(fields[i][y * width + x], limit);
        std::copy(c.begin(), c.end(), out + x * 3);
      }
    }
  }
  return WriteRgbPng(path, rgb.data(), canvas_h, canvas_w);
}

}  // namespace gantry
