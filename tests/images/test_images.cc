#include "tests/images/test_images.h"

#include <png.h>
// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>
#include <webp/encode.h>
#include <zlib.h>

#include <cstddef>
#include <cstdio>
#include <fstream>

#include "common/check.h"

namespace gantry::test_images {
namespace {

void OnPngWriteError(png_structp, png_const_charp message) {
  std::fprintf(stderr, "test_images: libpng: %s\n", message);
  std::abort();
}

void AppendToString(png_structp png, png_bytep data, size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

void NoFlush(png_structp) {}

int PngColorType(PngKind kind) {
  switch (kind) {
    case PngKind::kGray:
      return PNG_COLOR_TYPE_GRAY;
    case PngKind::kGrayAlpha:
      return PNG_COLOR_TYPE_GRAY_ALPHA;
    case PngKind::kRgb:
      return PNG_COLOR_TYPE_RGB;
    case PngKind::kRgba:
      return PNG_COLOR_TYPE_RGBA;
    case PngKind::kPalette:
      return PNG_COLOR_TYPE_PALETTE;
  }
  return PNG_COLOR_TYPE_RGB;
}

int PngChannels(PngKind kind) {
  switch (kind) {
    case PngKind::kGrayAlpha:
      return 2;
    case PngKind::kRgb:
      return 3;
    case PngKind::kRgba:
      return 4;
    default:
      return 1;
  }
}

// One row packed at the bit depth: 1, 2, 4 bits MSB first; 8; 16 big-endian.
std::vector<uint8_t> PackRow(const uint16_t* samples, int n, int bit_depth) {
  std::vector<uint8_t> row;
  if (bit_depth == 16) {
    for (int i = 0; i < n; ++i) {
      row.push_back(static_cast<uint8_t>(samples[i] >> 8));
      row.push_back(static_cast<uint8_t>(samples[i]));
    }
  } else if (bit_depth == 8) {
    for (int i = 0; i < n; ++i) row.push_back(static_cast<uint8_t>(samples[i]));
  } else {
    const int per_byte = 8 / bit_depth;
    row.assign(static_cast<size_t>((n + per_byte - 1) / per_byte), 0);
    for (int i = 0; i < n; ++i) {
      const int shift = 8 - bit_depth * (i % per_byte + 1);
      row[static_cast<size_t>(i / per_byte)] |= static_cast<uint8_t>(samples[i] << shift);
    }
  }
  return row;
}

}  // namespace

std::vector<uint16_t> Pattern(int width, int height, int channels, int bits, int seed) {
  const int max = (1 << bits) - 1;
  std::vector<uint16_t> samples(static_cast<size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        // A gradient per channel, in different directions, shifted by the seed.
        const double t = (c % 3 == 0 ? x : c % 3 == 1 ? y : x + y) / double(width + height) + 0.13 * seed + 0.07 * c;
        const double frac = t - static_cast<int>(t);
        samples[(static_cast<size_t>(y) * width + x) * channels + c] = static_cast<uint16_t>(frac * max + 0.5);
      }
    }
  }
  return samples;
}

std::vector<uint8_t> Pattern8(int width, int height, int channels, int seed) {
  const std::vector<uint16_t> p = Pattern(width, height, channels, 8, seed);
  return std::vector<uint8_t>(p.begin(), p.end());
}

std::string Png(const PngSpec& spec, const std::vector<uint16_t>& samples) {
  const int channels = PngChannels(spec.kind);
  CHECK_EQ(samples.size(), static_cast<size_t>(spec.width) * spec.height * channels);
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, OnPngWriteError, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, AppendToString, NoFlush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(spec.width), static_cast<png_uint_32>(spec.height), spec.bit_depth,
               PngColorType(spec.kind), spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  std::vector<png_color> palette;
  if (spec.kind == PngKind::kPalette) {
    for (size_t i = 0; i + 2 < spec.palette.size(); i += 3) {
      palette.push_back({spec.palette[i], spec.palette[i + 1], spec.palette[i + 2]});
    }
    png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
    if (!spec.palette_alpha.empty()) {
      png_set_tRNS(png, info, spec.palette_alpha.data(), static_cast<int>(spec.palette_alpha.size()), nullptr);
    }
  }
  png_write_info(png, info);
  std::vector<std::vector<uint8_t>> rows;
  std::vector<png_bytep> row_pointers;
  for (int y = 0; y < spec.height; ++y) {
    rows.push_back(PackRow(samples.data() + static_cast<size_t>(y) * spec.width * channels, spec.width * channels,
                           spec.bit_depth));
  }
  for (auto& row : rows) row_pointers.push_back(row.data());
  png_write_image(png, row_pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

std::string Jpeg(const JpegSpec& spec, const std::vector<uint8_t>& pixels) {
  CHECK_EQ(pixels.size(), static_cast<size_t>(spec.width) * spec.height * spec.components);
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);  // exits on error: fine for tests
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(spec.width);
  cinfo.image_height = static_cast<JDIMENSION>(spec.height);
  cinfo.input_components = spec.components;
  cinfo.in_color_space = spec.components == 1 ? JCS_GRAYSCALE : spec.components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, spec.quality, TRUE);
  if (spec.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  const size_t row_bytes = static_cast<size_t>(spec.width) * spec.components;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) + cinfo.next_scanline * row_bytes;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

std::string Webp(int width, int height, int channels, const std::vector<uint8_t>& pixels, bool lossless) {
  CHECK(channels == 3 || channels == 4);
  CHECK_EQ(pixels.size(), static_cast<size_t>(width) * height * channels);
  uint8_t* output = nullptr;
  const int stride = width * channels;
  size_t size = 0;
  if (lossless) {
    size = channels == 4 ? WebPEncodeLosslessRGBA(pixels.data(), width, height, stride, &output)
                         : WebPEncodeLosslessRGB(pixels.data(), width, height, stride, &output);
  } else {
    size = channels == 4 ? WebPEncodeRGBA(pixels.data(), width, height, stride, 90, &output)
                         : WebPEncodeRGB(pixels.data(), width, height, stride, 90, &output);
  }
  CHECK(size > 0);
  std::string out(reinterpret_cast<const char*>(output), size);
  WebPFree(output);
  return out;
}

namespace {

// One PNG chunk: length, type, data, CRC of type and data.
std::string PngChunk(const char* type, const std::string& data) {
  std::string chunk;
  const uint32_t n = static_cast<uint32_t>(data.size());
  for (int shift : {24, 16, 8, 0}) chunk.push_back(static_cast<char>(n >> shift));
  std::string body = std::string(type, 4) + data;
  const uint32_t crc =
      static_cast<uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
  chunk += body;
  for (int shift : {24, 16, 8, 0}) chunk.push_back(static_cast<char>(crc >> shift));
  return chunk;
}

}  // namespace

std::string HugePngHeader(uint32_t width, uint32_t height) {
  std::string ihdr;
  for (uint32_t v : {width, height}) {
    for (int shift : {24, 16, 8, 0}) ihdr.push_back(static_cast<char>(v >> shift));
  }
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8 bits, RGB, deflate, no filter, no interlace
  // A zlib stream of a few zero bytes: what a real bomb would inflate from.
  const std::string idat("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10);
  return std::string("\x89PNG\r\n\x1a\n", 8) + PngChunk("IHDR", ihdr) + PngChunk("IDAT", idat) + PngChunk("IEND", "");
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  CHECK(out.good());
}

}  // namespace gantry::test_images
