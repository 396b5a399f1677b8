#include "worker/train/image_grid.h"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/file_io.h"

namespace gantry {
namespace {

// libpng refuses wider or taller images by default (PNG_USER_WIDTH_MAX).
constexpr int64_t kMaxSide = 1000000;

uint8_t ToByte(float v) {
  if (!(v > -1.0f)) return 0;  // also NaN
  if (v >= 1.0f) return 255;
  return static_cast<uint8_t>((v + 1.0f) * 127.5f + 0.5f);
}

// What the libpng callbacks write into: the encoded bytes, or the error that stopped it.
struct PngSink {
  std::string bytes;
  char error[256] = "";
};

void OnPngError(png_structp png, png_const_charp message) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->error, sizeof(sink->error), "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

void WriteToSink(png_structp png, png_bytep data, png_size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  // A C++ exception must not unwind through libpng's C frames; turn it into png_error.
  bool out_of_memory = false;
  try {
    sink->bytes.append(reinterpret_cast<const char*>(data), n);
  } catch (const std::bad_alloc&) {
    out_of_memory = true;
  }
  if (out_of_memory) png_error(png, "out of memory");
}

void FlushSink(png_structp) {}

// Encodes a grayscale (channels 1) or RGB (channels 3) canvas into sink->bytes; false
// (with sink->error set) on failure.
// Kept free of C++ objects with destructors, because png_error longjmps back into it.
bool EncodePng(const uint8_t* canvas, png_uint_32 width, png_uint_32 height, int channels, PngSink* sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, OnPngError, OnPngWarning);
  if (png == nullptr) {
    std::snprintf(sink->error, sizeof(sink->error), "png_create_write_struct failed");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(sink->error, sizeof(sink->error), "png_create_info_struct failed");
    return false;
  }
  // png and info are not modified after setjmp, so they keep their values on longjmp.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, WriteToSink, FlushSink);
  png_set_IHDR(png, info, width, height, 8, channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (png_uint_32 y = 0; y < height; ++y) png_write_row(png, canvas + static_cast<size_t>(y) * width * channels);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

absl::Status WritePngGrid(const std::string& path, const float* images, int64_t count, int64_t height,
                          int64_t width, int64_t columns) {
  if (count <= 0 || height <= 0 || width <= 0 || columns <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot draw a grid of ", count, " images of ",
                                                   height, "x", width, " in ", columns,
                                                   " columns (all must be positive)"));
  }
  CHECK(images != nullptr);
  const int64_t grid_cols = std::min(columns, count);
  const int64_t grid_rows = (count + grid_cols - 1) / grid_cols;
  const int64_t canvas_w = grid_cols * width + (grid_cols - 1) * kGridGap;
  const int64_t canvas_h = grid_rows * height + (grid_rows - 1) * kGridGap;
  if (canvas_w > kMaxSide || canvas_h > kMaxSide) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": a ", canvas_w, "x", canvas_h,
                                                   " grid is larger than a PNG may be here (", kMaxSide,
                                                   " pixels a side); use fewer images or more columns"));
  }

  std::vector<uint8_t> canvas(static_cast<size_t>(canvas_w * canvas_h), kGridGapValue);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t x0 = (i % grid_cols) * (width + kGridGap);
    const int64_t y0 = (i / grid_cols) * (height + kGridGap);
    const float* image = images + i * height * width;
    for (int64_t y = 0; y < height; ++y) {
      uint8_t* out = canvas.data() + (y0 + y) * canvas_w + x0;
      for (int64_t x = 0; x < width; ++x) out[x] = ToByte(image[y * width + x]);
    }
  }

  PngSink sink;
  if (!EncodePng(canvas.data(), static_cast<png_uint_32>(canvas_w), static_cast<png_uint_32>(canvas_h), 1,
                 &sink)) {
    return absl::InternalError(absl::StrCat(path, ": PNG encoding failed: ", sink.error));
  }
  return WriteFileAtomically(path, sink.bytes);
}

absl::Status WriteRgbPng(const std::string& path, const uint8_t* rgb, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0 || height > kMaxSide || width > kMaxSide) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot draw a ", height, "x", width, " image (sides in [1, ",
                                                   kMaxSide, "])"));
  }
  CHECK(rgb != nullptr);
  PngSink sink;
  if (!EncodePng(rgb, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 3, &sink)) {
    return absl::InternalError(absl::StrCat(path, ": PNG encoding failed: ", sink.error));
  }
  return WriteFileAtomically(path, sink.bytes);
}

}  // namespace gantry
