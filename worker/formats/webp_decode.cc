#include "worker/formats/webp_decode.h"

#include <webp/decode.h>

#include <new>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

absl::Status WebpFailure(VP8StatusCode code, const char* stage) {
  switch (code) {
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return absl::OutOfRangeError(absl::StrCat("WebP: the data ends inside ", stage));
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return absl::UnimplementedError(absl::StrCat("WebP: a feature libwebp does not read, in ", stage));
    case VP8_STATUS_OUT_OF_MEMORY:
      return absl::InternalError("WebP: out of memory");
    default:
      return absl::DataLossError(absl::StrCat("WebP, in ", stage, ": libwebp status ", static_cast<int>(code),
                                              code == VP8_STATUS_BITSTREAM_ERROR ? " (a bitstream error)" : ""));
  }
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeWebp(std::span<const uint8_t> bytes, const ImageDecodeOptions& options) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return absl::InternalError("libwebp: version mismatch");
  if (VP8StatusCode code = WebPGetFeatures(bytes.data(), bytes.size(), &config.input); code != VP8_STATUS_OK) {
    return WebpFailure(code, "the header");
  }
  if (config.input.has_animation) return absl::UnimplementedError("an animated WebP: only still images are read");
  DecodedImage image;
  image.format = ImageFormat::kWebp;
  image.file = {config.input.width, config.input.height};
  if (absl::Status st = CheckImageHeader(ImageFormat::kWebp, image.file, options); !st.ok()) return st;
  image.width = image.file.width;
  image.height = image.file.height;
  image.channels = config.input.has_alpha ? 4 : 3;
  const size_t stride = static_cast<size_t>(image.width) * image.channels;
  try {
    image.pixels.resize(stride * static_cast<size_t>(image.height));
  } catch (const std::bad_alloc&) {
    return absl::InternalError(absl::StrCat("out of memory for a ", image.width, "x", image.height, " WebP"));
  }
  config.output.colorspace = config.input.has_alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = image.pixels.data();
  config.output.u.RGBA.stride = static_cast<int>(stride);
  config.output.u.RGBA.size = image.pixels.size();
  const VP8StatusCode code = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);  // frees nothing of ours (external memory), but is the contract
  if (code != VP8_STATUS_OK) return WebpFailure(code, "the image data");
  return image;
}

}  // namespace gantry
