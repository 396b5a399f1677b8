#include "worker/formats/png_encode.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <new>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// libpng refuses wider or taller images by default (PNG_USER_WIDTH_MAX).
constexpr int64_t kMaxSide = 1000000;

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

// Encodes a canvas of `color_type` into sink->bytes; false (with sink->error set) on failure.
// Kept free of C++ objects with destructors, because png_error longjmps back into it.
bool EncodeCanvas(const uint8_t* canvas, png_uint_32 width, png_uint_32 height, int color_type, size_t row_bytes,
                  PngSink* sink) {
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
  png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (png_uint_32 y = 0; y < height; ++y) png_write_row(png, canvas + static_cast<size_t>(y) * row_bytes);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

absl::StatusOr<std::string> EncodePng(std::span<const uint8_t> pixels, int64_t width, int64_t height, int channels) {
  if (width <= 0 || height <= 0 || width > kMaxSide || height > kMaxSide || channels < 1 || channels > 4) {
    return absl::InvalidArgumentError(absl::StrCat("cannot encode a ", width, "x", height, " PNG of ", channels,
                                                   " channel(s): sides must be 1 to ", kMaxSide,
                                                   ", channels 1 (gray), 2 (gray, alpha), 3 (RGB) or 4 (RGBA)"));
  }
  static constexpr int kColorType[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                       PNG_COLOR_TYPE_RGB_ALPHA};
  const size_t row_bytes = static_cast<size_t>(width) * static_cast<size_t>(channels);
  if (pixels.size() != row_bytes * static_cast<size_t>(height)) {
    return absl::InvalidArgumentError(absl::StrCat("a ", width, "x", height, "x", channels, " PNG needs ",
                                                   row_bytes * static_cast<size_t>(height), " bytes of pixels, got ",
                                                   pixels.size()));
  }
  PngSink sink;
  if (!EncodeCanvas(pixels.data(), static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
                    kColorType[channels - 1], row_bytes, &sink)) {
    return absl::InternalError(absl::StrCat("PNG encoding failed: ", sink.error));
  }
  return std::move(sink.bytes);
}

}  // namespace gantry
