// 8-bit PNG encoding in memory (libpng): the sample grids, the plots and the images of
// TensorBoard summaries.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

// The PNG file's bytes for `pixels`: height rows of width pixels, each `channels` bytes
// (1: grayscale, 2: grayscale and alpha, 3: RGB, 4: RGBA), row-major. INVALID_ARGUMENT for non-positive or mismatched
// sizes or another channel count; INTERNAL for a libpng error.
absl::StatusOr<std::string> EncodePng(std::span<const uint8_t> pixels, int64_t width, int64_t height, int channels);

}  // namespace gantry
