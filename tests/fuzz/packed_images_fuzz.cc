// Fuzz target: the packed image set's reader (worker/data/packed_images.h), which
// verifies a file made by make-dataset, or handed over by anyone, at open.
//
// Input: one mode byte, then the file. Mode bit 0 set: every CRC the file holds (the
// header's, the index and strings', each record's where the header's offsets reach it)
// is recomputed before the file is written, so the fuzzer reaches the checks behind the
// CRCs (it would almost never mutate its way past one). Clear: the file as it is.
// Every input must end in an opened set or a refusal naming the file, never a crash or
// a read outside the mapping. An opened set must be consistent with itself (labels in
// range, every record byte readable, sources readable) and, the format being canonical,
// written again through PackedImagesWriter it must give the same bytes.
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/fuzz/fuzz_support.h"
#include "worker/data/packed_images.h"
#include "worker/data/packed_images_writer.h"

namespace {

uint64_t Le64(const std::string& file, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, file.data() + at, 8);
  return v;
}

void PutCrc(std::string& file, size_t at, const char* data, uint64_t n) {
  const auto crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n)));
  std::memcpy(file.data() + at, &crc, 4);
}

// Recomputes the CRCs, as far as the header's numbers point inside the file.
void FixCrcs(std::string& file) {
  if (file.size() < 128) return;
  const uint64_t size = Le64(file, 16), channels = Le64(file, 24), count = Le64(file, 32), stride = Le64(file, 40);
  const uint64_t records = Le64(file, 48), index = Le64(file, 56);
  if (size <= 1024 && channels <= 4 && stride > 0 && records <= file.size() && index <= file.size()) {
    const uint64_t record_bytes = channels * size * size;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t entry = index + 16 * i, record = records + i * stride;
      if (entry + 16 > file.size() || record + record_bytes > file.size() || i > file.size()) break;
      PutCrc(file, entry, file.data() + record, record_bytes);
    }
  }
  if (index <= file.size() && index >= 128) PutCrc(file, 104, file.data() + index, file.size() - index);
  PutCrc(file, 124, file.data(), 124);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size == 0) return 0;
  static gantry::fuzz::ScratchFile scratch("-packed.gpk");
  static gantry::fuzz::ScratchFile rewritten("-rewritten.gpk");
  std::string file(reinterpret_cast<const char*>(input) + 1, input_size - 1);
  if ((input[0] & 1) != 0) FixCrcs(file);
  const auto* data = reinterpret_cast<const uint8_t*>(file.data());
  const size_t size = file.size();
  const std::string& path = scratch.Write(data, size);
  absl::StatusOr<std::unique_ptr<gantry::PackedImages>> opened = gantry::PackedImages::Open(path);
  if (!opened.ok()) {
    FUZZ_EXPECT(opened.status().message().find(path) != std::string::npos, "a refusal names the file");
    return 0;
  }
  const gantry::PackedImages& set = **opened;
  const gantry::PackedImagesInfo& info = set.info();
  FUZZ_EXPECT(info.count >= 1 && set.record_bytes() == info.channels * info.image_size * info.image_size,
              "record size");
  FUZZ_EXPECT(static_cast<size_t>(info.count * set.record_bytes()) < size, "records fit in the file");

  ::unlink(rewritten.path().c_str());
  auto writer = gantry::PackedImagesWriter::Create(rewritten.path(), info);
  FUZZ_EXPECT(writer.ok(), "an opened set's settings can be written");
  for (int64_t i = 0; i < info.count; ++i) {
    const int label = set.label(i);
    FUZZ_EXPECT(
        info.class_names.empty() ? label == -1 : label >= 0 && label < static_cast<int>(info.class_names.size()),
        "label in range");
    uint32_t sum = 0;
    for (int64_t b = 0; b < set.record_bytes(); ++b) sum += set.record(i)[b];  // every byte readable
    (void)sum;
    FUZZ_EXPECT((*writer)->Append({set.record(i), static_cast<size_t>(set.record_bytes())}, label, set.source(i)).ok(),
                "append");
  }
  FUZZ_EXPECT((*writer)->Finish(info.class_names).ok(), "finish");
  FUZZ_EXPECT(ReadAll(rewritten.path()) == std::string(reinterpret_cast<const char*>(data), size),
              "the format is canonical: rewriting gives the same bytes");
  return 0;
}
