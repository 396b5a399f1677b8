// JPEG decoding with libjpeg-turbo, for untrusted files: baseline and progressive,
// grayscale (1 channel), YCbCr and RGB (3), CMYK and YCCK (4 in the file, 3 here: see
// below). Arithmetic coding is read too; 12-bit and lossless JPEGs are not
// (UNIMPLEMENTED). EXIF orientation is not applied (as PIL's open does not).
//
// CMYK -> RGB: R = (255 - C)(255 - K)/255 (and so on), as PIL converts; files with an
// Adobe APP14 marker (Photoshop's) store inverted inks and are inverted first, as PIL
// reads them.
//
// Hardening beyond the header limits (decoded_image.h): the image data ending early
// ("Premature end of JPEG file", which libjpeg would otherwise fill with gray) is
// truncated; entropy-coded data that libjpeg can only skip or resync past (a bad
// Huffman or arithmetic code, a marker inside a segment, an inconsistent progression)
// is corrupt, while extraneous bytes between markers, common and harmless, are accepted;
// a progressive file of more than kMaxJpegScans scans (each costs a pass over the whole
// image: a small file can ask for millions) is corrupt.
//
// Reduction while decoding: libjpeg's DCT scaling by k/8 (k = 1..8), the smallest k
// that keeps the image at least options.least_size, so a 4000x3000 photo packed at 64
// is decoded at 1/8 scale, eight times less work per side.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "worker/formats/decoded_image.h"

namespace gantry {

inline constexpr int kMaxJpegScans = 1000;

// `bytes` must start with the JPEG signature (FF D8 FF; image_decode.h sniffs it).
absl::StatusOr<DecodedImage> DecodeJpeg(std::span<const uint8_t> bytes, const ImageDecodeOptions& options);

}  // namespace gantry
