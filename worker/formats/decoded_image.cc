#include "worker/formats/decoded_image.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kHeif:
      return "HEIF/AVIF";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

absl::Status CheckImageHeader(ImageFormat format, ImageSize file, const ImageDecodeOptions& options) {
  // Both sides are at most 2^31 in every format read here, so the product fits.
  const int64_t pixels = file.width * file.height;
  if (pixels > options.max_pixels) {
    return absl::ResourceExhaustedError(absl::StrCat("a ", ImageFormatName(format), " of ", file.width, "x",
                                                     file.height, " (", pixels, " pixels) is more than the ",
                                                     options.max_pixels, " pixels allowed"));
  }
  if (file.width < options.min_side || file.height < options.min_side) {
    return absl::FailedPreconditionError(absl::StrCat("a ", ImageFormatName(format), " of ", file.width, "x",
                                                      file.height, ": both sides must be at least ", options.min_side,
                                                      " pixels"));
  }
  return absl::OkStatus();
}

ImageSize LeastSize(ImageSize file, const ImageDecodeOptions& options) {
  if (!options.least_size) return file;
  const ImageSize least = options.least_size(file);
  return {std::clamp<int64_t>(least.width, 1, file.width), std::clamp<int64_t>(least.height, 1, file.height)};
}

}  // namespace gantry
