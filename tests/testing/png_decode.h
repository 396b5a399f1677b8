// Test helper: decodes a PNG (file bytes) to 8-bit RGB with libpng's simplified API.
#pragma once

#include <png.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gantry::testing_png {

struct Decoded {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // height x width x 3
};

inline std::optional<Decoded> DecodeRgb(const std::string& png) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size())) return std::nullopt;
  image.format = PNG_FORMAT_RGB;
  Decoded d;
  d.width = static_cast<int>(image.width);
  d.height = static_cast<int>(image.height);
  d.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, d.rgb.data(), 0, nullptr)) return std::nullopt;
  return d;
}

}  // namespace gantry::testing_png
