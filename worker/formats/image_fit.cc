#include "worker/formats/image_fit.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/formats/image_resample.h"

namespace gantry {
namespace {

// round(excess / 2) with ties to even, as Python's round() in torchvision's CenterCrop.
int64_t CenterCropOffset(int64_t excess) {
  const int64_t half = excess / 2;
  if (excess % 2 == 0) return half;
  return half % 2 == 0 ? half : half + 1;
}

// One source row as working values, `channels` floats a pixel: the colour channels
// (composited over the background, or premultiplied by alpha with keep) then, with keep,
// alpha (0..255).
void PrepareRow(const uint8_t* source, int64_t width, int source_channels, const ImageFitSettings& settings,
                float* out) {
  const bool keep = settings.alpha == AlphaHandling::kKeep;
  const float background = settings.alpha == AlphaHandling::kWhite ? 255.0f : 0.0f;
  const bool gray = source_channels <= 2;
  const bool has_alpha = source_channels == 2 || source_channels == 4;
  for (int64_t x = 0; x < width; ++x) {
    const uint8_t* p = source + x * source_channels;
    const float r = p[0];
    const float g = gray ? r : p[1];
    const float b = gray ? r : p[2];
    const float a = has_alpha ? p[source_channels - 1] : 255.0f;
    const float coverage = a * (1.0f / 255.0f);
    // With keep: colour * coverage. Otherwise colour * coverage + background * (1 -
    // coverage), which is the colour itself where the pixel is opaque.
    const float under = keep ? 0.0f : background * (1.0f - coverage);
    if (settings.channels == 1) {
      const float luma = gray ? r : 0.299f * r + 0.587f * g + 0.114f * b;
      *out++ = luma * coverage + under;
    } else {
      *out++ = r * coverage + under;
      *out++ = g * coverage + under;
      *out++ = b * coverage + under;
    }
    if (keep) *out++ = a;
  }
}

// v clamped to 0..255. (Written as x > lo ? x : lo, the semantics of the SIMD max and min
// instructions, so that loops of it vectorise; std::max and std::min differ on NaN.)
inline float ClampToByteRange(float v) {
  v = v > 0.0f ? v : 0.0f;
  return v < 255.0f ? v : 255.0f;
}

// One row resampled across: dst[j * C + c] for the taps' samples j, from C floats a pixel,
// clamped to 0..255 as PIL's 8-bit image between its two passes is (the cubic overshoots
// at edges; without the clamp, an upscaled edge differs from PIL's by up to 13, with it
// every value is within 1: tests/formats/image_fit_test.cc, FitImage.MatchesPilBicubic).
template <int C>
void ResampleRow(const float* row, const ResampleTaps& taps, float* dst) {
  const size_t n = taps.first.size();
  for (size_t j = 0; j < n; ++j) {
    const float* w = taps.weights.data() + j * static_cast<size_t>(taps.stride);
    const float* src = row + static_cast<size_t>(taps.first[j]) * C;
    float acc[C] = {};
    for (int64_t k = 0; k < taps.count[j]; ++k) {
      for (int c = 0; c < C; ++c) acc[c] += w[k] * src[k * C + c];
    }
    for (int c = 0; c < C; ++c) dst[j * C + c] = ClampToByteRange(acc[c]);
  }
}

}  // namespace

const char* ImageFitName(ImageFit fit) {
  switch (fit) {
    case ImageFit::kCrop:
      return "crop";
    case ImageFit::kPad:
      return "pad";
    case ImageFit::kStretch:
      return "stretch";
  }
  return "?";
}

const char* AlphaHandlingName(AlphaHandling alpha) {
  switch (alpha) {
    case AlphaHandling::kWhite:
      return "white";
    case AlphaHandling::kBlack:
      return "black";
    case AlphaHandling::kKeep:
      return "keep";
  }
  return "?";
}

absl::StatusOr<ImageFit> ParseImageFit(absl::string_view name) {
  for (ImageFit fit : {ImageFit::kCrop, ImageFit::kPad, ImageFit::kStretch}) {
    if (name == ImageFitName(fit)) return fit;
  }
  return absl::InvalidArgumentError(absl::StrCat("fit '", name, "': use crop, pad or stretch"));
}

absl::StatusOr<AlphaHandling> ParseAlphaHandling(absl::string_view name) {
  for (AlphaHandling alpha : {AlphaHandling::kWhite, AlphaHandling::kBlack, AlphaHandling::kKeep}) {
    if (name == AlphaHandlingName(alpha)) return alpha;
  }
  return absl::InvalidArgumentError(absl::StrCat("alpha '", name, "': use white, black or keep"));
}

absl::Status CheckImageFitSettings(const ImageFitSettings& settings) {
  if (settings.size < kMinFitSize || settings.size > kMaxFitSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("image size ", settings.size, ": must be ", kMinFitSize, " to ", kMaxFitSize));
  }
  if (settings.channels != 1 && settings.channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat("channels ", settings.channels, ": must be 1 (luma) or 3 (RGB)"));
  }
  return absl::OkStatus();
}

int StoredChannels(const ImageFitSettings& settings) {
  return settings.channels + (settings.alpha == AlphaHandling::kKeep ? 1 : 0);
}

FitGeometry PlanFit(ImageSize file, const ImageFitSettings& settings) {
  const int64_t n = settings.size, w = file.width, h = file.height;
  FitGeometry g;
  switch (settings.fit) {
    case ImageFit::kStretch:
      g.resized = {n, n};
      break;
    case ImageFit::kCrop:
      g.resized = w <= h ? ImageSize{n, n * h / w} : ImageSize{n * w / h, n};
      g.offset_x = CenterCropOffset(g.resized.width - n);
      g.offset_y = CenterCropOffset(g.resized.height - n);
      break;
    case ImageFit::kPad:
      // round(n * short / long), halves up, at least 1.
      g.resized = w >= h ? ImageSize{n, std::max<int64_t>(1, (2 * n * h + w) / (2 * w))}
                         : ImageSize{std::max<int64_t>(1, (2 * n * w + h) / (2 * h)), n};
      g.offset_x = -((n - g.resized.width) / 2);
      g.offset_y = -((n - g.resized.height) / 2);
      break;
  }
  return g;
}

void FitImage(const DecodedImage& image, const ImageFitSettings& settings, std::span<uint8_t> out) {
  const int64_t n = settings.size;
  const int channels = StoredChannels(settings);
  const size_t plane = static_cast<size_t>(n * n);
  // The background first: white or black colour planes; with keep, transparent black.
  const uint8_t background = settings.alpha == AlphaHandling::kWhite ? 255 : 0;
  std::memset(out.data(), background, plane * static_cast<size_t>(settings.channels));
  if (channels > settings.channels) std::memset(out.data() + plane * settings.channels, 0, plane);

  const FitGeometry g = PlanFit(image.file, settings);
  // The resized image's samples that land inside the square.
  const int64_t u0 = std::max<int64_t>(0, g.offset_x), u1 = std::min(g.resized.width, n + g.offset_x);
  const int64_t v0 = std::max<int64_t>(0, g.offset_y), v1 = std::min(g.resized.height, n + g.offset_y);
  if (u0 >= u1 || v0 >= v1) return;
  const ResampleTaps tx = ComputeResampleTaps(image.width, g.resized.width, u0, u1);
  const ResampleTaps ty = ComputeResampleTaps(image.height, g.resized.height, v0, v1);
  const size_t nu = static_cast<size_t>(u1 - u0), nv = static_cast<size_t>(v1 - v0);
  const int64_t y_lo = ty.first.front();
  int64_t y_hi = y_lo;
  for (size_t j = 0; j < nv; ++j) y_hi = std::max(y_hi, ty.first[j] + ty.count[j]);

  // Horizontal pass over the source rows the vertical pass reads: rows of nu samples.
  const size_t row_values = nu * static_cast<size_t>(channels);
  std::vector<float> source_row(static_cast<size_t>(image.width) * channels);
  std::vector<float> across(static_cast<size_t>(y_hi - y_lo) * row_values);
  const size_t source_row_bytes = static_cast<size_t>(image.width) * image.channels;
  for (int64_t sy = y_lo; sy < y_hi; ++sy) {
    PrepareRow(image.pixels.data() + static_cast<size_t>(sy) * source_row_bytes, image.width, image.channels, settings,
               source_row.data());
    float* dst = across.data() + static_cast<size_t>(sy - y_lo) * row_values;
    switch (channels) {
      case 1:
        ResampleRow<1>(source_row.data(), tx, dst);
        break;
      case 2:
        ResampleRow<2>(source_row.data(), tx, dst);
        break;
      case 3:
        ResampleRow<3>(source_row.data(), tx, dst);
        break;
      default:
        ResampleRow<4>(source_row.data(), tx, dst);
        break;
    }
  }

  // Vertical pass, one output row at a time, then to bytes (unpremultiplied with keep).
  std::vector<float> down(row_values);
  const bool keep = settings.alpha == AlphaHandling::kKeep;
  const int colors = settings.channels;
  for (size_t j = 0; j < nv; ++j) {
    std::fill(down.begin(), down.end(), 0.0f);
    const float* w = ty.weights.data() + j * static_cast<size_t>(ty.stride);
    for (int64_t k = 0; k < ty.count[j]; ++k) {
      const float* src = across.data() + static_cast<size_t>(ty.first[j] + k - y_lo) * row_values;
      for (size_t i = 0; i < row_values; ++i) down[i] += w[k] * src[i];
    }
    // Where row v of the resized image lands: output row v - offset_y, from column u0 - offset_x.
    uint8_t* row = out.data() +
                   static_cast<size_t>(v0 + static_cast<int64_t>(j) - g.offset_y) * static_cast<size_t>(n) +
                   static_cast<size_t>(u0 - g.offset_x);
    if (keep) {
      // Unpremultiplied colour: premultiplied value * 255 / alpha; none where transparent.
      for (size_t i = 0; i < nu; ++i) {
        float* pixel = down.data() + i * channels;
        const float alpha = std::min(std::max(pixel[colors], 0.0f), 255.0f);
        const float unpremultiply = alpha >= 0.5f ? 255.0f / alpha : 0.0f;
        for (int c = 0; c < colors; ++c) pixel[c] *= unpremultiply;
      }
    }
    // Clamped to 0..255 and rounded in one contiguous (vectorised) pass, then each
    // plane's bytes.
    for (float& v : down) v = ClampToByteRange(v) + 0.5f;
    for (int c = 0; c < channels; ++c) {
      uint8_t* plane_row = row + static_cast<size_t>(c) * plane;
      const float* value = down.data() + c;
      for (size_t i = 0; i < nu; ++i) plane_row[i] = static_cast<uint8_t>(static_cast<int>(value[i * channels]));
    }
  }
}

}  // namespace gantry
