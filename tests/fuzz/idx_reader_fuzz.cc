// Fuzz target: the IDX reader (worker/data/idx_reader.h), images and labels.
//
// Input: one mode byte, then the file. Mode bit 0 set: the rest is gzipped before it is
// written, so the fuzzer explores the headers and payloads behind a valid gzip stream
// (it would almost never mutate its way to one). Clear: the rest is the file as it is
// (raw IDX, or a gzip stream the fuzzer damaged). Every input must end in a result or
// an error, never a crash; a result must be as large as its header says.
#include <zlib.h>

#include <cstdint>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "worker/data/idx_reader.h"

namespace {

std::vector<uint8_t> Gzip(const uint8_t* data, size_t size) {
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper, as `gzip` writes.
  FUZZ_EXPECT(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::vector<uint8_t> out(deflateBound(&z, size) + 32);
  z.next_in = const_cast<uint8_t*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  FUZZ_EXPECT(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static gantry::fuzz::ScratchFile scratch("-train-images-idx3-ubyte");
  const bool gzip = (data[0] & 1) != 0;
  std::vector<uint8_t> file(data + 1, data + size);
  if (gzip) file = Gzip(file.data(), file.size());
  const std::string& path = scratch.Write(file.data(), file.size());

  const absl::StatusOr<gantry::IdxImages> images = gantry::ReadIdxImages(path);
  if (images.ok()) {
    FUZZ_EXPECT(images->count >= 0 && images->rows > 0 && images->cols > 0, "image dimensions");
    FUZZ_EXPECT(images->rows <= gantry::kMaxIdxSide && images->cols <= gantry::kMaxIdxSide, "image side bound");
    FUZZ_EXPECT(images->pixels.size() == static_cast<size_t>(images->count * images->rows * images->cols),
                "pixels match the header");
  } else {
    FUZZ_EXPECT(!images.status().message().empty(), "an error says what is wrong");
  }
  const absl::StatusOr<std::vector<uint8_t>> labels = gantry::ReadIdxLabels(path);
  if (!labels.ok()) FUZZ_EXPECT(!labels.status().message().empty(), "an error says what is wrong");
  return 0;
}
