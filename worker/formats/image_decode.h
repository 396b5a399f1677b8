// Decoding an image file's bytes, whatever its name says: the format is told by the
// content (the signature at its start), never by the file name, so a .png that holds a
// JPEG is read as the JPEG it is. PNG (libpng), JPEG (libjpeg-turbo) and WebP (libwebp)
// are read; GIF, BMP, TIFF and HEIF/AVIF are recognised and refused as such.
//
// Why these libraries (bench/image_decode_bench.cc measures the candidates; docs/images.md
// has the numbers): they are the reference implementations of their formats, maintained
// for and fuzzed as decoders of untrusted input (OSS-Fuzz), in every Debian system and
// small; libpng was linked already; libjpeg-turbo reduces while decoding (DCT scaling).
// stb_image, as fast on small PNGs, says of itself that it is not meant for untrusted
// input, and reads no WebP; libvips links about 100 libraries and loads ImageMagick and
// poppler as modules (attack surface), and its per-image cost dominates on small images.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "worker/formats/decoded_image.h"

namespace gantry {

// The format whose signature `bytes` starts with; kUnknown when none.
ImageFormat SniffImageFormat(std::span<const uint8_t> bytes);

// Decodes a PNG, JPEG or WebP (by its signature) to 8-bit pixels; the errors and their
// codes are those decoded_image.h lists: INVALID_ARGUMENT for bytes that are no image,
// UNIMPLEMENTED for a recognised format that is not read.
absl::StatusOr<DecodedImage> DecodeImage(std::span<const uint8_t> bytes, const ImageDecodeOptions& options);

}  // namespace gantry
