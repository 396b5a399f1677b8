// What the image decoders (png_decode.h, jpeg_decode.h, webp_decode.h; image_decode.h picks
// one by the file's first bytes) return, and the limits every one of them applies from
// the header, before it decodes a pixel.
//
// The decoders take untrusted bytes. Every failure is a Status, never a crash, an abort
// or a leak (libpng's and libjpeg's longjmp errors are caught inside the decoder), and
// its code says what kind of failure it was, so a caller can count them by kind:
//   INVALID_ARGUMENT    not an image: no signature of a format this code reads
//   UNIMPLEMENTED       an image of a format or kind this code does not read (a GIF, an
//                       animated WebP, a 12-bit JPEG)
//   OUT_OF_RANGE        truncated: the data ends before the image does
//   DATA_LOSS           corrupt: the decoder found data it cannot make sense of
//   RESOURCE_EXHAUSTED  a decompression bomb: width x height above max_pixels
//   FAILED_PRECONDITION too small: a side below min_side
//   INTERNAL            out of memory, or a library failing in another way
// The message says what the decoder saw, without the file's name (the caller has it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gantry {

enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kGif, kBmp, kTiff, kHeif };

// "PNG", "JPEG", "WebP", "GIF", "BMP", "TIFF", "HEIF/AVIF"; "unknown".
const char* ImageFormatName(ImageFormat format);

struct ImageSize {
  int64_t width = 0;
  int64_t height = 0;
};

struct ImageDecodeOptions {
  // A header with width x height above this is refused before anything is allocated
  // for pixels (RESOURCE_EXHAUSTED): a small file can claim 100000 x 100000.
  int64_t max_pixels = int64_t{64} << 20;
  // A header with a side below this is refused before decoding (FAILED_PRECONDITION).
  int64_t min_side = 1;
  // Given the size the file holds, the least size the caller needs. A decoder that can
  // reduce while decoding (JPEG's DCT scaling, by k/8) may then return a smaller image,
  // never smaller than this on either side. Empty: always the full size.
  std::function<ImageSize(ImageSize file)> least_size;
};

struct DecodedImage {
  ImageFormat format = ImageFormat::kUnknown;
  ImageSize file;     // the size the file holds, as its header says
  int64_t width = 0;  // of `pixels`: the file's size, or less when reduced while decoding
  int64_t height = 0;
  int channels = 0;             // 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (alpha not premultiplied)
  std::vector<uint8_t> pixels;  // height rows of width pixels of `channels` bytes, 8 bits each
};

// The refusal of a header that breaks `options` (RESOURCE_EXHAUSTED or
// FAILED_PRECONDITION, see above), or OK. The decoders call it before they decode.
absl::Status CheckImageHeader(ImageFormat format, ImageSize file, const ImageDecodeOptions& options);

// The size to reduce to, per `options.least_size` (the file's size when it is empty),
// never larger than the file.
ImageSize LeastSize(ImageSize file, const ImageDecodeOptions& options);

}  // namespace gantry
