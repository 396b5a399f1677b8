// gantry-make-test-images DIR: writes the folder make-dataset's end-to-end test packs
// (tests/data/make_dataset_e2e.sh), two classes of images in every format and kind
// make-dataset reads, plus files it must skip. DIR must not exist.
// gantry-make-test-images --fuzz-seeds DIR: writes the seeds of the image_decode fuzz
// target (tests/fuzz/corpus/image_decode): small files of every kind, each after a mode
// byte (image_decode_fuzz.cc), into the existing folder DIR.
//
//   DIR/cats/rgba.png        64x48 RGBA PNG          packed
//   DIR/cats/baseline.jpg    80x80 baseline JPEG     packed
//   DIR/cats/lossless.webp   40x40 RGBA WebP         packed
//   DIR/cats/notes.txt       text                    skipped: not an image
//   DIR/dogs/gray16.png      40x40 16-bit gray PNG   packed
//   DIR/dogs/progressive.jpg 96x64 progressive JPEG  packed
//   DIR/dogs/jpeg.png        a JPEG named .png       packed (the content decides)
//   DIR/dogs/cut.png         a PNG cut in its data   skipped: truncated
//   DIR/dogs/tiny.png        4x4 PNG                 skipped: too small
//   DIR/dogs/bomb.png        IHDR of 100000x100000   skipped: decompression bomb
//   DIR/top.png              a PNG in no class       skipped with --labels folders
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/images/test_images.h"

using namespace gantry::test_images;

namespace {

void WriteFuzzSeeds(const std::string& dir) {
  auto seed = [&](const char* name, uint8_t mode, const std::string& file) {
    WriteFile(dir + "/" + name, std::string(1, static_cast<char>(mode)) + file);
  };
  seed("png-gray", 0, Png({.width = 9, .height = 7, .kind = PngKind::kGray}, Pattern(9, 7, 1, 8)));
  seed("png-gray-2bit", 1, Png({.width = 9, .height = 7, .kind = PngKind::kGray, .bit_depth = 2}, Pattern(9, 7, 1, 2)));
  seed("png-gray-alpha", 0x0A, Png({.width = 8, .height = 8, .kind = PngKind::kGrayAlpha}, Pattern(8, 8, 2, 8)));
  seed("png-rgb16", 0x22,
       Png({.width = 12, .height = 5, .kind = PngKind::kRgb, .bit_depth = 16}, Pattern(12, 5, 3, 16)));
  seed("png-rgba-keep", 0x10, Png({.width = 10, .height = 10, .kind = PngKind::kRgba}, Pattern(10, 10, 4, 8)));
  seed("png-interlaced", 0x44, Png({.width = 11, .height = 13, .interlaced = true}, Pattern(11, 13, 3, 8)));
  std::vector<uint16_t> indices(8 * 8);
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i % 3;
  seed("png-palette-trns", 0x16,
       Png({.width = 8,
            .height = 8,
            .kind = PngKind::kPalette,
            .palette = {1, 2, 3, 4, 5, 6, 7, 8, 9},
            .palette_alpha = {0, 128}},
           indices));
  seed("png-bomb-header", 0, HugePngHeader(100000, 100000));
  const std::string png = Png({.width = 16, .height = 16, .kind = PngKind::kRgb}, Pattern(16, 16, 3, 8));
  seed("png-truncated", 0, png.substr(0, png.size() / 2));
  seed("jpeg-baseline", 0x61, Jpeg({.width = 24, .height = 16}, Pattern8(24, 16, 3)));
  seed("jpeg-progressive", 0x02, Jpeg({.width = 16, .height = 24, .progressive = true}, Pattern8(16, 24, 3)));
  seed("jpeg-gray", 0x04, Jpeg({.width = 16, .height = 16, .components = 1}, Pattern8(16, 16, 1)));
  seed("jpeg-cmyk", 0x01, Jpeg({.width = 16, .height = 16, .components = 4}, Pattern8(16, 16, 4)));
  seed("jpeg-large-reduced", 0x00, Jpeg({.width = 128, .height = 96, .quality = 50}, Pattern8(128, 96, 3)));
  seed("webp-lossy", 0x20, Webp(16, 16, 3, Pattern8(16, 16, 3), false));
  seed("webp-lossless-alpha", 0x12, Webp(12, 12, 4, Pattern8(12, 12, 4), true));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--fuzz-seeds") {
    WriteFuzzSeeds(argv[2]);
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR | --fuzz-seeds DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  if (::mkdir(dir.c_str(), 0755) != 0 || ::mkdir((dir + "/cats").c_str(), 0755) != 0 ||
      ::mkdir((dir + "/dogs").c_str(), 0755) != 0) {
    std::perror(dir.c_str());
    return 1;
  }
  const std::string rgba = Png({.width = 64, .height = 48, .kind = PngKind::kRgba}, Pattern(64, 48, 4, 8, 1));
  WriteFile(dir + "/cats/rgba.png", rgba);
  WriteFile(dir + "/cats/baseline.jpg", Jpeg({.width = 80, .height = 80}, Pattern8(80, 80, 3, 2)));
  WriteFile(dir + "/cats/lossless.webp", Webp(40, 40, 4, Pattern8(40, 40, 4, 3), /*lossless=*/true));
  WriteFile(dir + "/cats/notes.txt", "not a picture\n");
  WriteFile(dir + "/dogs/gray16.png",
            Png({.width = 40, .height = 40, .kind = PngKind::kGray, .bit_depth = 16}, Pattern(40, 40, 1, 16, 4)));
  const std::string jpeg = Jpeg({.width = 96, .height = 64, .progressive = true}, Pattern8(96, 64, 3, 5));
  WriteFile(dir + "/dogs/progressive.jpg", jpeg);
  WriteFile(dir + "/dogs/jpeg.png", Jpeg({.width = 32, .height = 32}, Pattern8(32, 32, 3, 6)));
  WriteFile(dir + "/dogs/cut.png", rgba.substr(0, rgba.size() / 2));
  WriteFile(dir + "/dogs/tiny.png", Png({.width = 4, .height = 4, .kind = PngKind::kRgb}, Pattern(4, 4, 3, 8)));
  WriteFile(dir + "/dogs/bomb.png", HugePngHeader(100000, 100000));
  WriteFile(dir + "/top.png", Png({.width = 16, .height = 16, .kind = PngKind::kRgb}, Pattern(16, 16, 3, 8, 7)));
  return 0;
}
