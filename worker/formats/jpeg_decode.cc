#include "worker/formats/jpeg_decode.h"

// jpeglib.h needs FILE and size_t declared before it, and jerror.h needs jpeglib.h's
// configuration (which error codes exist) before it.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <csetjmp>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

// libjpeg's error manager, extended with where to jump and what went wrong. Plain
// data: the functions that set a jump point hold no C++ object with a destructor.
struct JpegErrors {
  jpeg_error_mgr manager;
  jmp_buf jump;
  bool truncated = false;
  int code = 0;  // libjpeg's message code of the error
  char message[JMSG_LENGTH_MAX + 64] = "";
};

[[noreturn]] void OnJpegError(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  errors->code = cinfo->err->msg_code;
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings that mean the pixels would be wrong (see the header) end the decoding.
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level != -1) return;  // trace messages
  const int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF) reinterpret_cast<JpegErrors*>(cinfo->err)->truncated = true;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC || code == JWRN_HUFF_BAD_CODE ||
      code == JWRN_ARITH_BAD_CODE || code == JWRN_BOGUS_PROGRESSION) {
    OnJpegError(cinfo);
  }
}

// Called once per scan (and more) while a progressive image is read.
void OnJpegProgress(j_common_ptr cinfo) {
  auto* decompress = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (decompress->input_scan_number <= kMaxJpegScans) return;
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  std::snprintf(errors->message, sizeof(errors->message), "more than %d scans", kMaxJpegScans);
  std::longjmp(errors->jump, 1);
}

// The decompressor, destroyed on every path.
struct JpegHandle {
  jpeg_decompress_struct cinfo{};
  jpeg_progress_mgr progress{};
  bool created = false;
  ~JpegHandle() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// Each step below is its own function with its own setjmp: a longjmp lands in the
// step that called libjpeg, which returns false (JpegErrors says why).
bool CreateJpeg(JpegHandle* handle, JpegErrors* errors) {
  if (setjmp(errors->jump)) return false;
  jpeg_create_decompress(&handle->cinfo);
  handle->created = true;
  return true;
}

bool ReadJpegHeader(j_decompress_ptr cinfo, JpegErrors* errors, const uint8_t* data, size_t size) {
  if (setjmp(errors->jump)) return false;
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  return true;
}

// The output colour space, and the smallest DCT scaling k/8 that keeps the output at
// least `least` (calc_output_dimensions gives each k's size).
bool ChooseJpegOutput(j_decompress_ptr cinfo, JpegErrors* errors, ImageSize least) {
  if (setjmp(errors->jump)) return false;
  switch (cinfo->jpeg_color_space) {
    case JCS_GRAYSCALE:
      cinfo->out_color_space = JCS_GRAYSCALE;
      break;
    case JCS_CMYK:
    case JCS_YCCK:
      cinfo->out_color_space = JCS_CMYK;
      break;
    default:
      cinfo->out_color_space = JCS_RGB;
      break;
  }
  cinfo->scale_denom = 8;
  for (unsigned k = 1; k <= 8; ++k) {
    cinfo->scale_num = k;
    jpeg_calc_output_dimensions(cinfo);
    if (cinfo->output_width >= least.width && cinfo->output_height >= least.height) break;
  }
  return true;
}

bool StartJpeg(j_decompress_ptr cinfo, JpegErrors* errors) {
  if (setjmp(errors->jump)) return false;
  jpeg_start_decompress(cinfo);
  return true;
}

bool ReadJpegRows(j_decompress_ptr cinfo, JpegErrors* errors, uint8_t* pixels, size_t row_bytes) {
  if (setjmp(errors->jump)) return false;
  while (cinfo->output_scanline < cinfo->output_height) {
    JSAMPROW row = pixels + cinfo->output_scanline * row_bytes;
    jpeg_read_scanlines(cinfo, &row, 1);
  }
  return true;
}

absl::Status JpegFailure(const JpegErrors& errors, size_t size) {
  if (errors.truncated) {
    return absl::OutOfRangeError(absl::StrCat("JPEG: the data ends after ", size, " bytes (", errors.message, ")"));
  }
  if (errors.code == JERR_BAD_PRECISION) return absl::UnimplementedError(absl::StrCat("JPEG: ", errors.message));
  return absl::DataLossError(absl::StrCat("JPEG: ", errors.message));
}

// CMYK (inverted when `adobe`) to RGB in place: 4 bytes a pixel become 3.
void CmykToRgb(std::vector<uint8_t>& pixels, bool adobe) {
  const size_t n = pixels.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    int c = pixels[4 * i], m = pixels[4 * i + 1], y = pixels[4 * i + 2], k = pixels[4 * i + 3];
    if (adobe) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
    // (255 - c)(255 - k)/255, rounded.
    pixels[3 * i] = static_cast<uint8_t>(((255 - c) * (255 - k) + 127) / 255);
    pixels[3 * i + 1] = static_cast<uint8_t>(((255 - m) * (255 - k) + 127) / 255);
    pixels[3 * i + 2] = static_cast<uint8_t>(((255 - y) * (255 - k) + 127) / 255);
  }
  pixels.resize(3 * n);
}

}  // namespace

absl::StatusOr<DecodedImage> DecodeJpeg(std::span<const uint8_t> bytes, const ImageDecodeOptions& options) {
  JpegErrors errors;
  JpegHandle handle;
  handle.cinfo.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = OnJpegError;
  errors.manager.emit_message = OnJpegMessage;
  if (!CreateJpeg(&handle, &errors)) return absl::InternalError(absl::StrCat("libjpeg: ", errors.message));
  handle.progress.progress_monitor = OnJpegProgress;
  handle.cinfo.progress = &handle.progress;
  j_decompress_ptr cinfo = &handle.cinfo;

  if (!ReadJpegHeader(cinfo, &errors, bytes.data(), bytes.size())) return JpegFailure(errors, bytes.size());
  DecodedImage image;
  image.format = ImageFormat::kJpeg;
  image.file = {cinfo->image_width, cinfo->image_height};
  if (absl::Status st = CheckImageHeader(ImageFormat::kJpeg, image.file, options); !st.ok()) return st;
  if (!ChooseJpegOutput(cinfo, &errors, LeastSize(image.file, options)) || !StartJpeg(cinfo, &errors)) {
    return JpegFailure(errors, bytes.size());
  }
  const int components = cinfo->output_components;
  if (components != 1 && components != 3 && components != 4) {
    return absl::InternalError(absl::StrCat("libjpeg gave ", components, " components"));
  }
  image.width = cinfo->output_width;
  image.height = cinfo->output_height;
  const size_t row_bytes = static_cast<size_t>(image.width) * components;
  try {
    image.pixels.resize(row_bytes * static_cast<size_t>(image.height));
  } catch (const std::bad_alloc&) {
    return absl::InternalError(absl::StrCat("out of memory for a ", image.width, "x", image.height, " JPEG"));
  }
  if (!ReadJpegRows(cinfo, &errors, image.pixels.data(), row_bytes)) return JpegFailure(errors, bytes.size());
  image.channels = components;
  if (components == 4) {
    CmykToRgb(image.pixels, cinfo->saw_Adobe_marker);
    image.channels = 3;
  }
  return image;
}

}  // namespace gantry
