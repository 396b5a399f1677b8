// The image decoders make-dataset could use, measured side by side on this machine, one
// thread each, and make-dataset's whole pipeline (read, decode, fit, write) as it runs.
//
//   gantry-bench-images [--seconds 2] [--files 2000]
//
// Table 1, decoders, images in memory (no file reads), images/s, the best of 5 short
// rounds in which the candidates take turns (on a shared machine, the least disturbed):
//   PNG 64x64 RGBA (deflate level 6) and JPEG 256x256 RGB (quality 90) to 8-bit pixels;
//   "to 64" rows also make 64x64 (JPEG DCT scaling where the library has it, then the
//   filter). Candidates: libpng + libjpeg-turbo (what gantry links), stb_image (the
//   header-only decoder of libstb-dev), libvips (new_from_buffer + write_to_memory, and
//   its thumbnail operation), each where this build found it.
// Table 2, PackImageFolder on folders of files written first (page cache warm),
// images/s for the whole pipeline, and the packed file's size.
// Table 3, opening a packed set (PackedImages::Open verifies every CRC): GB/s; and zlib's
// crc32 alone on 256 MB.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "spdlog/spdlog.h"
#include "tests/images/test_images.h"
#include "worker/data/pack_image_folder.h"
#include "worker/data/packed_images.h"
#include "worker/data/packed_images_format.h"
#include "worker/formats/image_decode.h"
#include "worker/formats/image_fit.h"

#ifdef GANTRY_BENCH_STB
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#include <stb/stb_image.h>
#endif
#ifdef GANTRY_BENCH_VIPS
#include <vips/vips.h>
#endif

namespace {

using namespace gantry;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Images per second of `decode` over `files`, round after round, for at least `seconds`.
// `decode` returns false on failure, which aborts the benchmark.
double Rate(const std::vector<std::string>& files, double seconds,
            const std::function<bool(const std::string&)>& decode) {
  int64_t n = 0;
  const Clock::time_point start = Clock::now();
  do {
    for (const std::string& f : files) {
      if (!decode(f)) {
        std::fprintf(stderr, "a decoder failed\n");
        std::exit(1);
      }
      ++n;
    }
  } while (Since(start) < seconds);
  return static_cast<double>(n) / Since(start);
}

std::span<const uint8_t> Bytes(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

bool GantryDecode(const std::string& f) { return DecodeImage(Bytes(f), {}).ok(); }

bool GantryDecodeFit(const std::string& f, int64_t size) {
  ImageFitSettings settings;
  settings.size = size;
  ImageDecodeOptions options;
  options.least_size = [&](ImageSize file) { return PlanFit(file, settings).resized; };
  absl::StatusOr<DecodedImage> image = DecodeImage(Bytes(f), options);
  if (!image.ok()) return false;
  std::vector<uint8_t> out(static_cast<size_t>(3 * size * size));
  FitImage(*image, settings, out);
  return true;
}

#ifdef GANTRY_BENCH_STB
bool StbDecode(const std::string& f) {
  int w = 0, h = 0, n = 0;
  stbi_uc* p = stbi_load_from_memory(Bytes(f).data(), static_cast<int>(f.size()), &w, &h, &n, 4);
  stbi_image_free(p);
  return p != nullptr;
}
#endif

#ifdef GANTRY_BENCH_VIPS
bool VipsDecode(const std::string& f) {
  VipsImage* image = vips_image_new_from_buffer(f.data(), f.size(), "", "access", VIPS_ACCESS_SEQUENTIAL, nullptr);
  if (image == nullptr) return false;
  size_t size = 0;
  void* pixels = vips_image_write_to_memory(image, &size);
  g_free(pixels);
  g_object_unref(image);
  return pixels != nullptr;
}

bool VipsThumbnail(const std::string& f) {
  VipsImage* image = nullptr;
  if (vips_thumbnail_buffer(const_cast<char*>(f.data()), f.size(), &image, 64, "height", 64, "crop",
                            VIPS_INTERESTING_CENTRE, nullptr) != 0) {
    return false;
  }
  size_t size = 0;
  void* pixels = vips_image_write_to_memory(image, &size);
  g_free(pixels);
  g_object_unref(image);
  return pixels != nullptr;
}
#endif

std::string CellText(double v) { return v < 0 ? "-" : std::to_string(static_cast<int64_t>(v + 0.5)); }

// Writes `files` to a fresh folder DIR/one/ (one class) and packs it; images/s and bytes.
struct PackRun {
  double rate = 0;
  int64_t bytes = 0;
};
PackRun PackFolder(const std::string& dir, const std::vector<std::string>& files, const char* ext, int64_t size) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/one");
  for (size_t i = 0; i < files.size(); ++i) {
    test_images::WriteFile(dir + "/one/" + std::to_string(i) + ext, files[i]);
  }
  PackRun best;
  for (int round = 0; round < 3; ++round) {
    PackRequest request;
    request.from = dir;
    request.out = dir + ".pack" + std::to_string(round);
    request.image_size = size;
    std::filesystem::remove(request.out);
    const Clock::time_point start = Clock::now();
    absl::StatusOr<PackReport> report = PackImageFolder(request, 1e9);
    const double seconds = Since(start);
    if (!report.ok() || report->packed != static_cast<int64_t>(files.size())) {
      std::fprintf(stderr, "pack failed: %s\n", report.ok() ? "images skipped" : report.status().ToString().c_str());
      std::exit(1);
    }
    best.rate = std::max(best.rate, static_cast<double>(files.size()) / seconds);
    best.bytes = report->file_bytes;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gantry-bench-images: image decoders and the make-dataset pipeline, one thread"};
  double seconds = 2;
  int files = 2000;
  app.add_option("--seconds", seconds, "seconds per decoder cell, over its 5 rounds [default: 2]");
  app.add_option("--files", files, "PNG files per pipeline measurement (a quarter as many JPEGs) [default: 2000]");
  CLI11_PARSE(app, argc, argv);
#ifdef GANTRY_BENCH_VIPS
  if (VIPS_INIT(argv[0]) != 0) return 1;
  vips_concurrency_set(1);
  vips_cache_set_max(0);
#endif
  spdlog::set_level(spdlog::level::warn);

  std::vector<std::string> pngs, jpegs;
  for (int i = 0; i < 64; ++i) {
    pngs.push_back(test_images::Png({.width = 64, .height = 64, .kind = test_images::PngKind::kRgba},
                                    test_images::Pattern(64, 64, 4, 8, i)));
    jpegs.push_back(
        test_images::Jpeg({.width = 256, .height = 256, .quality = 90}, test_images::Pattern8(256, 256, 3, i)));
  }
  // Every cell is measured in kRounds short rounds, the candidates taking turns, and the
  // best round counts: on a machine others share, the least disturbed round is the
  // closest to what the code costs, and no candidate gets the quiet minutes alone.
  struct Cell {
    std::string candidate;
    int column;  // 0 PNG, 1 JPEG, 2 JPEG to 64
    const std::vector<std::string>* files;
    std::function<bool(const std::string&)> decode;
    double best = 0;
  };
  const std::string ours = "libpng 1.6 + libjpeg-turbo 2.1 (gantry: decode)";
  const std::string ours_fit = "libpng 1.6 + libjpeg-turbo 2.1 (gantry: decode + fit, crop 64)";
  auto fit64 = [](const std::string& f) { return GantryDecodeFit(f, 64); };
  std::vector<Cell> cells = {{ours, 0, &pngs, GantryDecode},
                             {ours, 1, &jpegs, GantryDecode},
                             {ours_fit, 0, &pngs, fit64},
                             {ours_fit, 2, &jpegs, fit64}};
#ifdef GANTRY_BENCH_STB
  cells.push_back({"stb_image 2.27 (decode)", 0, &pngs, StbDecode});
  cells.push_back({"stb_image 2.27 (decode)", 1, &jpegs, StbDecode});
#endif
#ifdef GANTRY_BENCH_VIPS
  const std::string vips = std::string("libvips ") + vips_version_string();
  cells.push_back({vips + " (decode)", 0, &pngs, VipsDecode});
  cells.push_back({vips + " (decode)", 1, &jpegs, VipsDecode});
  cells.push_back({vips + " (thumbnail, crop 64)", 0, &pngs, VipsThumbnail});
  cells.push_back({vips + " (thumbnail, crop 64)", 2, &jpegs, VipsThumbnail});
#endif
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    for (Cell& cell : cells) cell.best = std::max(cell.best, Rate(*cell.files, seconds / kRounds, cell.decode));
  }
  std::printf("Decoders, one thread, images in memory (images/s, best of %d rounds taken in turns):\n\n", kRounds);
  std::printf("| candidate | PNG 64x64 RGBA | JPEG 256x256 | JPEG 256x256 to 64x64 |\n|---|---|---|---|\n");
  std::vector<std::string> printed;
  for (const Cell& row : cells) {
    if (std::find(printed.begin(), printed.end(), row.candidate) != printed.end()) continue;
    printed.push_back(row.candidate);
    double column[3] = {-1, -1, -1};
    for (const Cell& cell : cells) {
      if (cell.candidate == row.candidate) column[cell.column] = cell.best;
    }
    std::printf("| %s | %s | %s | %s |\n", row.candidate.c_str(), CellText(column[0]).c_str(),
                CellText(column[1]).c_str(), CellText(column[2]).c_str());
  }
#ifndef GANTRY_BENCH_STB
  std::printf("| stb_image | not built (libstb-dev not found) | | |\n");
#endif
#ifndef GANTRY_BENCH_VIPS
  std::printf("| libvips | not built (libvips-dev not found) | | |\n");
#endif

  const std::string dir =
      std::filesystem::temp_directory_path().string() + "/gantry-bench-images-" + std::to_string(::getpid());
  std::vector<std::string> png_files, jpeg_files;
  for (int i = 0; i < files; ++i) png_files.push_back(pngs[static_cast<size_t>(i) % pngs.size()]);
  for (int i = 0; i < files / 4; ++i) jpeg_files.push_back(jpegs[static_cast<size_t>(i) % jpegs.size()]);
  std::printf("\nmake-dataset's pipeline (PackImageFolder: read, decode, fit, write; best of 3), one thread:\n\n");
  std::printf("| files | --image-size | images/s | packed MB |\n|---|---|---|---|\n");
  struct Case {
    const char* name;
    const std::vector<std::string>* files;
    const char* ext;
    int64_t size;
  };
  PackRun largest;
  std::string largest_path;
  for (const Case& c :
       {Case{"PNG 64x64 RGBA", &png_files, ".png", 64}, Case{"PNG 64x64 RGBA", &png_files, ".png", 32},
        Case{"JPEG 256x256", &jpeg_files, ".jpg", 64}, Case{"JPEG 256x256", &jpeg_files, ".jpg", 256}}) {
    const PackRun run = PackFolder(dir, *c.files, c.ext, c.size);
    std::printf("| %zu %s | %lld | %s | %.1f |\n", c.files->size(), c.name, static_cast<long long>(c.size),
                CellText(run.rate).c_str(), static_cast<double>(run.bytes) / 1e6);
    if (run.bytes > largest.bytes) {
      largest = run;
      largest_path = dir + ".pack0";
      std::filesystem::copy_file(largest_path, dir + ".largest", std::filesystem::copy_options::overwrite_existing);
    }
  }

  std::printf("\nVerification at open (every CRC, page cache warm):\n\n");
  Clock::time_point start = Clock::now();
  int opens = 0;
  do {
    absl::StatusOr<std::unique_ptr<PackedImages>> opened = PackedImages::Open(dir + ".largest");
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
      return 1;
    }
    ++opens;
  } while (Since(start) < seconds);
  const double open_gbps = static_cast<double>(largest.bytes) * opens / Since(start) / 1e9;
  std::vector<uint8_t> block(size_t{256} << 20, 0x5a);
  start = Clock::now();
  int crcs = 0;
  uint32_t crc = 0;
  do {
    crc = PackedCrc(block.data(), block.size());
    ++crcs;
  } while (Since(start) < seconds);
  const double crc_gbps = static_cast<double>(block.size()) * crcs / Since(start) / 1e9;
  std::printf("| what | GB/s | seconds per GB |\n|---|---|---|\n");
  std::printf("| PackedImages::Open, %.0f MB set | %.2f | %.2f |\n", static_cast<double>(largest.bytes) / 1e6,
              open_gbps, 1 / open_gbps);
  std::printf("| zlib crc32, 256 MB in memory (crc %08x) | %.2f | %.2f |\n", crc, crc_gbps, 1 / crc_gbps);

  std::filesystem::remove_all(dir);
  for (const char* suffix : {".pack0", ".pack1", ".pack2", ".largest"}) std::filesystem::remove(dir + suffix);
  return 0;
}
