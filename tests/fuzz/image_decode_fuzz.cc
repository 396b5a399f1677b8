// Fuzz target: the image decoders and the fitting behind make-dataset
// (worker/formats/image_decode.h, image_fit.h): libpng's and libjpeg's longjmp errors
// caught in our wrappers, the header limits, JPEG's reduction while decoding, and the
// resampling of whatever size comes out.
//
// Input: one mode byte, then the file. Mode bits 0-1: fit (crop, pad, stretch); bit 2:
// 1 or 3 channels; bits 3-4: alpha (white, black, keep); bits 5-7: N = 8 << (bits % 4).
// Every input must end in pixels or a refusal with one of the codes decoded_image.h
// lists, never a crash; pixels must be as many as the sizes say, and the fit must fill
// its record exactly.
#include <cstdint>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "worker/formats/image_decode.h"
#include "worker/formats/image_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  gantry::ImageFitSettings settings;
  settings.fit = static_cast<gantry::ImageFit>((mode & 3) % 3);
  settings.channels = (mode & 4) ? 1 : 3;
  settings.alpha = static_cast<gantry::AlphaHandling>(((mode >> 3) & 3) % 3);
  settings.size = int64_t{8} << ((mode >> 5) % 4);
  gantry::ImageDecodeOptions options;
  options.max_pixels = int64_t{1} << 22;  // bounded work per input
  options.min_side = 1;
  options.least_size = [&](gantry::ImageSize file) { return gantry::PlanFit(file, settings).resized; };

  const absl::StatusOr<gantry::DecodedImage> image = gantry::DecodeImage({data + 1, size - 1}, options);
  if (!image.ok()) {
    const absl::StatusCode code = image.status().code();
    FUZZ_EXPECT(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kUnimplemented ||
                    code == absl::StatusCode::kOutOfRange || code == absl::StatusCode::kDataLoss ||
                    code == absl::StatusCode::kResourceExhausted || code == absl::StatusCode::kFailedPrecondition ||
                    code == absl::StatusCode::kInternal,
                "a documented refusal");
    FUZZ_EXPECT(!image.status().message().empty(), "a refusal says what is wrong");
    return 0;
  }
  FUZZ_EXPECT(image->channels >= 1 && image->channels <= 4, "channels");
  FUZZ_EXPECT(image->width >= 1 && image->height >= 1 && image->width <= image->file.width &&
                  image->height <= image->file.height,
              "decoded size within the file's");
  FUZZ_EXPECT(image->file.width * image->file.height <= options.max_pixels, "the pixel limit held");
  FUZZ_EXPECT(image->pixels.size() == static_cast<size_t>(image->width * image->height * image->channels),
              "pixels match the sizes");
  std::vector<uint8_t> record(static_cast<size_t>(gantry::StoredChannels(settings) * settings.size * settings.size));
  gantry::FitImage(*image, settings, record);
  return 0;
}
