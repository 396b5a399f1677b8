// Fuzz target: the safetensors reader (worker/formats/safetensors.h), which reads
// weights made anywhere (train --init-from).
//
// Input: the file. Every input must end in a file or an error, never a crash or a read
// outside the input. A decoded file must hold tensors whose bytes match dtype x shape,
// and encoding it and decoding that must give the same tensors and metadata.
#include <cstdint>

#include "tests/fuzz/fuzz_support.h"
#include "worker/formats/safetensors.h"

namespace {

bool SameTensors(const gantry::StFile& a, const gantry::StFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const gantry::StTensor &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape || x.bytes != y.bytes) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<gantry::StFile> file = gantry::DecodeSafetensors({data, size}, "fuzz.safetensors");
  if (!file.ok()) {
    FUZZ_EXPECT(!file.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  for (const gantry::StTensor& t : file->tensors) {
    size_t n = gantry::StDtypeSize(t.dtype);
    for (int64_t d : t.shape) {
      FUZZ_EXPECT(d >= 0, "dimensions are non-negative");
      n *= static_cast<size_t>(d);
    }
    FUZZ_EXPECT(t.bytes.size() == n, "bytes match dtype x shape");
  }
  const absl::StatusOr<std::string> again = gantry::EncodeSafetensors(*file);
  FUZZ_EXPECT(again.ok(), "a decoded file encodes");
  const absl::StatusOr<gantry::StFile> back =
      gantry::DecodeSafetensors({reinterpret_cast<const uint8_t*>(again->data()), again->size()}, "again");
  FUZZ_EXPECT(back.ok(), "an encoded file decodes");
  FUZZ_EXPECT(SameTensors(*file, *back), "tensors and metadata round-trip");
  return 0;
}
