#include "worker/formats/image_decode.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "worker/formats/jpeg_decode.h"
#include "worker/formats/png_decode.h"
#include "worker/formats/webp_decode.h"

namespace gantry {
namespace {

bool HasMagicAt(std::span<const uint8_t> bytes, size_t offset, const char* magic, size_t n) {
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, magic, n) == 0;
}

}  // namespace

ImageFormat SniffImageFormat(std::span<const uint8_t> bytes) {
  if (HasMagicAt(bytes, 0, "\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (HasMagicAt(bytes, 0, "\xff\xd8\xff", 3)) return ImageFormat::kJpeg;
  if (HasMagicAt(bytes, 0, "RIFF", 4) && HasMagicAt(bytes, 8, "WEBP", 4)) return ImageFormat::kWebp;
  if (HasMagicAt(bytes, 0, "GIF87a", 6) || HasMagicAt(bytes, 0, "GIF89a", 6)) return ImageFormat::kGif;
  if (HasMagicAt(bytes, 0, "BM", 2) && bytes.size() >= 26) return ImageFormat::kBmp;
  if (HasMagicAt(bytes, 0, "II*\0", 4) || HasMagicAt(bytes, 0, "MM\0*", 4)) return ImageFormat::kTiff;
  if (HasMagicAt(bytes, 4, "ftyp", 4)) {
    for (const char* brand : {"heic", "heix", "mif1", "msf1", "avif", "avis"}) {
      if (HasMagicAt(bytes, 8, brand, 4)) return ImageFormat::kHeif;
    }
  }
  return ImageFormat::kUnknown;
}

absl::StatusOr<DecodedImage> DecodeImage(std::span<const uint8_t> bytes, const ImageDecodeOptions& options) {
  const ImageFormat format = SniffImageFormat(bytes);
  switch (format) {
    case ImageFormat::kPng:
      return DecodePng(bytes, options);
    case ImageFormat::kJpeg:
      return DecodeJpeg(bytes, options);
    case ImageFormat::kWebp:
      return DecodeWebp(bytes, options);
    case ImageFormat::kUnknown:
      return absl::InvalidArgumentError(bytes.empty() ? "an empty file"
                                                      : "no PNG, JPEG or WebP signature at its start");
    default:
      return absl::UnimplementedError(
          absl::StrCat("a ", ImageFormatName(format), " image: only PNG, JPEG and WebP are read"));
  }
}

}  // namespace gantry
