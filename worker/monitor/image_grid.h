// Sample grids: a batch of generated images saved as one PNG for a quick look.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace gantry {

// Writes `count` single-channel images (each height x width floats, row-major, in
// [-1, 1]) as an 8-bit grayscale PNG: `columns` images per grid row (fewer when count
// is smaller), rows as many as needed, tiles separated by kGridGap pixels of mid-grey
// (kGridGapValue), which also fills the unused cells of the last row. Mid-grey rather
// than black because MNIST backgrounds are black (-1), so the tile edges stay visible.
// A value v becomes round((v + 1) * 127.5) clamped to [0, 255]; NaN becomes 0.
// The file appears atomically (temporary name in the same folder, fsync, rename).
// Fails on non-positive sizes or an I/O or libpng error.
absl::Status WritePngGrid(const std::string& path, const float* images, int64_t count, int64_t height,
                          int64_t width, int64_t columns);

// The same for images of 1-4 colour channels, each channels x height x width floats
// (planar, as the networks make them): 1 grey, 2 grey and alpha, 3 RGB, 4 RGBA; the
// grid's PNG has that many channels (gaps and empty cells mid-grey, alpha opaque).
absl::Status WriteColorPngGrid(const std::string& path, const float* images, int64_t count, int64_t channels,
                               int64_t height, int64_t width, int64_t columns);

// Writes an 8-bit RGB image (height x width pixels of 3 bytes, row-major) as a PNG,
// atomically as WritePngGrid does.
absl::Status WriteRgbPng(const std::string& path, const uint8_t* rgb, int64_t height, int64_t width);

inline constexpr int kGridGap = 2;
inline constexpr uint8_t kGridGapValue = 128;

}  // namespace gantry
