// PNG decoding with libpng, for untrusted files: every bit depth and colour type
// (palette, with or without tRNS transparency; gray and gray + alpha at 1 to 16 bits;
// RGB; RGBA), interlaced (Adam7) or not. Palettes are expanded, a tRNS chunk becomes an
// alpha channel, low bit depths are scaled up to 8 bits and 16-bit samples down to 8
// with rounding (png_set_scale_16: round(v * 255 / 65535)). Gamma and colour profiles
// are not applied (as PIL's open does not). Errors as decoded_image.h lists them.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "worker/formats/decoded_image.h"

namespace gantry {

// `bytes` must start with the PNG signature (image_decode.h sniffs it). Decodes the
// image data only: what follows it (ancillary chunks, IEND) is not read.
absl::StatusOr<DecodedImage> DecodePng(std::span<const uint8_t> bytes, const ImageDecodeOptions& options);

}  // namespace gantry
