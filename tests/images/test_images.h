// Image files written for the tests and the decoding benchmark, with the reference
// encoders (libpng, libjpeg-turbo, libwebp): every PNG variant make-dataset must read,
// JPEGs baseline, progressive, grayscale and CMYK, WebP lossy and lossless. Nothing here
// is used by gantry's programs. Failures abort (CHECK): a test image that cannot be made
// is a broken test, not a case to handle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry::test_images {

// A deterministic pattern: height rows of width pixels of `channels` samples, each
// below 2^bits (8 or 16; 1, 2, 4 for low-depth gray). Smooth gradients plus `seed`, so
// lossy encoders keep it close.
std::vector<uint16_t> Pattern(int width, int height, int channels, int bits, int seed = 0);
// The same as 8-bit bytes.
std::vector<uint8_t> Pattern8(int width, int height, int channels, int seed = 0);

enum class PngKind {
  kGray,       // 1 channel
  kGrayAlpha,  // 2
  kRgb,        // 3
  kRgba,       // 4
  kPalette,    // 1 channel of indices into `palette` (RGB triples), with tRNS alphas when given
};

struct PngSpec {
  int width = 8;
  int height = 8;
  PngKind kind = PngKind::kRgb;
  int bit_depth = 8;
  bool interlaced = false;
  std::vector<uint8_t> palette = {};        // kPalette: 3 bytes per entry
  std::vector<uint8_t> palette_alpha = {};  // kPalette: tRNS, one alpha per entry (may be shorter)
};

// The PNG file's bytes for `samples` (row-major, interleaved, each below 2^bit_depth).
std::string Png(const PngSpec& spec, const std::vector<uint16_t>& samples);

struct JpegSpec {
  int width = 8;
  int height = 8;
  int components = 3;  // 1 gray, 3 RGB (stored YCbCr), 4 CMYK (stored as given, with an Adobe marker)
  bool progressive = false;
  int quality = 95;
};

// The JPEG file's bytes for `pixels` (row-major, interleaved, spec.components bytes a pixel).
std::string Jpeg(const JpegSpec& spec, const std::vector<uint8_t>& pixels);

// A WebP of `channels` 3 (RGB) or 4 (RGBA) bytes a pixel; lossless or lossy at quality 90.
std::string Webp(int width, int height, int channels, const std::vector<uint8_t>& pixels, bool lossless);

// A PNG whose IHDR claims width x height (RGB, 8 bits) followed by a few bytes of
// image data and IEND: what a decompression bomb looks like to a header reader, in
// less than 100 bytes.
std::string HugePngHeader(uint32_t width, uint32_t height);

// Writes `bytes` to `path` (CHECK on failure).
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace gantry::test_images
