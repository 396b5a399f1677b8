#include "worker/formats/png_decode.h"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// What the libpng callbacks read from and report into. Plain data: png_error longjmps
// across the functions below, which therefore hold no C++ object with a destructor.
struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t position = 0;
  bool truncated = false;  // a read went past the end of the data
  char error[256] = "";
};

void OnPngReadError(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->error, sizeof(source->error), "%s", message);
  png_longjmp(png, 1);
}

// Warnings (a bad ancillary chunk's CRC, an unknown chunk) leave the pixels intact.
void OnPngReadWarning(png_structp, png_const_charp) {}

void ReadFromSource(png_structp png, png_bytep out, size_t n) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > source->size - source->position) {
    source->truncated = true;
    png_error(png, "the data ends early");
  }
  std::memcpy(out, source->data + source->position, n);
  source->position += n;
}

// The read structures, destroyed on every path.
struct PngHandles {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngHandles() {
    if (png != nullptr) png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
  }
};

struct PngHeader {
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
};

// Each step below is its own function with its own setjmp: a longjmp lands in the
// step that called libpng, which returns false (PngSource::error says why).
bool ReadPngInfo(png_structp png, png_infop info, PngHeader* header) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  png_get_IHDR(png, info, &header->width, &header->height, &header->bit_depth, &header->color_type, &header->interlace,
               nullptr, nullptr);
  return true;
}

// Sets the transforms to 8-bit gray, gray + alpha, RGB or RGBA rows; the row layout.
bool SetPngTransforms(png_structp png, png_infop info, const PngHeader& header, int* channels, size_t* row_bytes) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_expand(png);  // palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha
  if (header.bit_depth == 16) png_set_scale_16(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *channels = png_get_channels(png, info);
  *row_bytes = png_get_rowbytes(png, info);
  return true;
}

bool ReadPngRows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  return true;
}

absl::Status PngFailure(const PngSource& source, const char* stage) {
  if (source.truncated) {
    return absl::OutOfRangeError(absl::StrCat("PNG: the data ends after ", source.size, " bytes, inside ", stage));
  }
  return absl::DataLossError(absl::StrCat("PNG, in ", stage, ": ", source.error));
}

}  // namespace

absl::StatusOr<DecodedImage> DecodePng(std::span<const uint8_t> bytes, const ImageDecodeOptions& options) {
  PngSource source;
  source.data = bytes.data();
  source.size = bytes.size();
  PngHandles handles;
  handles.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, OnPngReadError, OnPngReadWarning);
  if (handles.png == nullptr) return absl::InternalError("png_create_read_struct failed");
  handles.info = png_create_info_struct(handles.png);
  if (handles.info == nullptr) return absl::InternalError("png_create_info_struct failed");
  png_set_read_fn(handles.png, &source, ReadFromSource);

  PngHeader header;
  if (!ReadPngInfo(handles.png, handles.info, &header)) return PngFailure(source, "the header");
  DecodedImage image;
  image.format = ImageFormat::kPng;
  image.file = {header.width, header.height};
  if (absl::Status st = CheckImageHeader(ImageFormat::kPng, image.file, options); !st.ok()) return st;
  size_t row_bytes = 0;
  if (!SetPngTransforms(handles.png, handles.info, header, &image.channels, &row_bytes)) {
    return PngFailure(source, "the header");
  }
  image.width = header.width;
  image.height = header.height;
  if (image.channels < 1 || image.channels > 4 || row_bytes != static_cast<size_t>(image.width) * image.channels) {
    return absl::InternalError(absl::StrCat("libpng gave rows of ", row_bytes, " bytes for ", image.width,
                                            " pixels of ", image.channels, " channels"));
  }
  std::vector<png_bytep> rows;
  try {
    image.pixels.resize(row_bytes * static_cast<size_t>(image.height));
    rows.resize(static_cast<size_t>(image.height));
  } catch (const std::bad_alloc&) {
    return absl::InternalError(absl::StrCat("out of memory for a ", image.width, "x", image.height, " PNG"));
  }
  for (size_t y = 0; y < rows.size(); ++y) rows[y] = image.pixels.data() + y * row_bytes;
  if (!ReadPngRows(handles.png, rows.data())) return PngFailure(source, "the image data");
  return image;
}

}  // namespace gantry
