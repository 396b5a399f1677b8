#include "worker/monitor/image_grid.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "worker/formats/png_encode.h"

namespace gantry {
namespace {

// libpng refuses wider or taller images by default (PNG_USER_WIDTH_MAX).
constexpr int64_t kMaxSide = 1000000;

uint8_t ToByte(float v) {
  if (!(v > -1.0f)) return 0;  // also NaN
  if (v >= 1.0f) return 255;
  return static_cast<uint8_t>((v + 1.0f) * 127.5f + 0.5f);
}

}  // namespace

absl::Status WritePngGrid(const std::string& path, const float* images, int64_t count, int64_t height,
                          int64_t width, int64_t columns) {
  return WriteColorPngGrid(path, images, count, 1, height, width, columns);
}

absl::Status WriteColorPngGrid(const std::string& path, const float* images, int64_t count, int64_t channels,
                               int64_t height, int64_t width, int64_t columns) {
  if (count <= 0 || height <= 0 || width <= 0 || columns <= 0 || channels < 1 || channels > 4) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot draw a grid of ", count, " images of ", channels,
                                                   "x", height, "x", width, " in ", columns,
                                                   " columns (all must be positive, channels at most 4)"));
  }
  CHECK(images != nullptr);
  const int64_t grid_cols = std::min(columns, count);
  const int64_t grid_rows = (count + grid_cols - 1) / grid_cols;
  const int64_t canvas_w = grid_cols * width + (grid_cols - 1) * kGridGap;
  const int64_t canvas_h = grid_rows * height + (grid_rows - 1) * kGridGap;
  if (canvas_w > kMaxSide || canvas_h > kMaxSide) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a ", canvas_w, "x", canvas_h,
                                                   " grid is larger than a PNG may be here (", kMaxSide,
                                                   " pixels a side); use fewer images or more columns"));
  }
  // Interleaved pixels; the gaps mid-grey, and opaque where there is an alpha channel.
  std::vector<uint8_t> canvas(static_cast<size_t>(canvas_w * canvas_h * channels), kGridGapValue);
  if (channels % 2 == 0) {
    for (size_t p = static_cast<size_t>(channels - 1); p < canvas.size(); p += static_cast<size_t>(channels)) {
      canvas[p] = 255;
    }
  }
  const int64_t plane = height * width;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t x0 = (i % grid_cols) * (width + kGridGap);
    const int64_t y0 = (i / grid_cols) * (height + kGridGap);
    const float* image = images + i * channels * plane;
    for (int64_t y = 0; y < height; ++y) {
      uint8_t* out = canvas.data() + ((y0 + y) * canvas_w + x0) * channels;
      for (int64_t x = 0; x < width; ++x) {
        for (int64_t c = 0; c < channels; ++c) out[x * channels + c] = ToByte(image[c * plane + y * width + x]);
      }
    }
  }
  absl::StatusOr<std::string> png = EncodePng(canvas, canvas_w, canvas_h, static_cast<int>(channels));
  if (!png.ok()) return absl::Status(png.status().code(), absl::StrCat(path, ": ", png.status().message()));
  return WriteFileAtomically(path, *png);
}

absl::Status WriteRgbPng(const std::string& path, const uint8_t* rgb, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0 || height > kMaxSide || width > kMaxSide) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot draw a ", height, "x", width, " image (sides in [1, ",
                                                   kMaxSide, "])"));
  }
  CHECK(rgb != nullptr);
  const std::span<const uint8_t> pixels(rgb, static_cast<size_t>(height * width * 3));
  absl::StatusOr<std::string> png = EncodePng(pixels, width, height, 3);
  if (!png.ok()) return absl::Status(png.status().code(), absl::StrCat(path, ": ", png.status().message()));
  return WriteFileAtomically(path, *png);
}

}  // namespace gantry
