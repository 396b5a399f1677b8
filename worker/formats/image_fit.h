// Fitting a decoded image into the N x N square make-dataset stores, as planar 8-bit
// channels (CHW, row-major), the layout of a float tensor row.
//
// Geometry (PlanFit), from the size the file holds:
//   crop     the short side scaled to N, the long side to floor(N * long / short), then
//            the centre N x N kept, its offset round((resized - N) / 2) with ties to
//            even: torchvision's Resize(N) + CenterCrop(N), as PyTorch's examples/dcgan
//            prepares images.
//   pad      the long side scaled to N, the short side to round(N * short / long) (at
//            least 1), centred (offset floor((N - resized) / 2)) on the background, as
//            PIL's ImageOps.pad does.
//   stretch  both sides scaled to N, the aspect ratio ignored.
// Resampling: the Catmull-Rom filter of image_resample.h, antialiased on downscale,
// from whatever size the decoder returned (it may have reduced a JPEG already) straight
// to the resized image's samples inside the square, so nothing outside is computed;
// across first, then down, with the values between the passes clamped to 0..255 as in
// PIL (whose Image.BICUBIC resize this matches within 1 per value).
//
// Channels: 3 (RGB; gray is replicated) or 1 (luma: Y = 0.299 R + 0.587 G + 0.114 B,
// the ITU-R BT.601 weights PIL's convert("L") uses). Alpha: white or black composites
// the image over that background (and pads with it); keep stores alpha as a last
// channel (2 or 4 channels), not premultiplied, resampled premultiplied so that
// transparent pixels lend no colour, and pads with transparent black.
// Each stored value is the filtered value rounded to the nearest integer and clamped to
// 0..255; an image already N x N, resized with stretch (or crop or pad), comes through
// exactly.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/formats/decoded_image.h"

namespace gantry {

enum class ImageFit { kCrop, kPad, kStretch };
enum class AlphaHandling { kWhite, kBlack, kKeep };

// "crop", "pad", "stretch"; "white", "black", "keep".
const char* ImageFitName(ImageFit fit);
const char* AlphaHandlingName(AlphaHandling alpha);
// INVALID_ARGUMENT naming the accepted names for anything else.
absl::StatusOr<ImageFit> ParseImageFit(absl::string_view name);
absl::StatusOr<AlphaHandling> ParseAlphaHandling(absl::string_view name);

inline constexpr int64_t kMinFitSize = 8;
inline constexpr int64_t kMaxFitSize = 1024;

struct ImageFitSettings {
  int64_t size = 64;  // N, kMinFitSize..kMaxFitSize
  int channels = 3;   // 1 or 3 colour channels
  ImageFit fit = ImageFit::kCrop;
  AlphaHandling alpha = AlphaHandling::kWhite;
};

// INVALID_ARGUMENT naming the setting when one is out of range.
absl::Status CheckImageFitSettings(const ImageFitSettings& settings);

// Colour channels plus alpha with keep: 1 to 4.
int StoredChannels(const ImageFitSettings& settings);

// Output pixel (x, y), 0 <= x, y < N, shows pixel (x + offset_x, y + offset_y) of the
// whole image resized to `resized`; where that is outside it, the background.
struct FitGeometry {
  ImageSize resized;
  int64_t offset_x = 0;
  int64_t offset_y = 0;
};

// The geometry for an image of `file` size (both sides >= 1).
FitGeometry PlanFit(ImageSize file, const ImageFitSettings& settings);

// Writes `image` fitted per `settings` into `out`: StoredChannels(settings) planes of
// size x size bytes. `out` must hold exactly that many bytes.
void FitImage(const DecodedImage& image, const ImageFitSettings& settings, std::span<uint8_t> out);

}  // namespace gantry
