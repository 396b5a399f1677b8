// WebP decoding with libwebp, for untrusted files: lossy and lossless, with or without
// alpha. Animated WebPs are not read (UNIMPLEMENTED). libwebp reports errors as status
// codes (no longjmp); they map to the kinds decoded_image.h lists.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "worker/formats/decoded_image.h"

namespace gantry {

// `bytes` must start with RIFF....WEBP (image_decode.h sniffs it). Always full size.
absl::StatusOr<DecodedImage> DecodeWebp(std::span<const uint8_t> bytes, const ImageDecodeOptions& options);

}  // namespace gantry
