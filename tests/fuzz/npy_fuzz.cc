// Fuzz target: the .npy reader (worker/formats/npy.h).
//
// Input: the file. Every input must end in an array or an error, never a crash. An
// array must hold exactly product(shape) values, and writing it back with WriteNpy and
// reading that must give the same shape and the same bits.
#include <cstdint>
#include <cstring>

#include "tests/fuzz/fuzz_support.h"
#include "worker/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gantry::fuzz::ScratchFile scratch(".npy");
  static gantry::fuzz::ScratchFile rewritten("-rewritten.npy");
  const std::string& path = scratch.Write(data, size);

  const absl::StatusOr<gantry::NpyArray> array = gantry::ReadNpy(path);
  if (!array.ok()) {
    FUZZ_EXPECT(!array.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  size_t numel = 1;
  for (int64_t d : array->shape) {
    FUZZ_EXPECT(d >= 0, "dimensions are non-negative");
    numel *= static_cast<size_t>(d);
  }
  FUZZ_EXPECT(array->data.size() == numel, "values match the shape");

  FUZZ_EXPECT(gantry::WriteNpy(rewritten.path(), array->data.data(), array->shape).ok(), "WriteNpy");
  const absl::StatusOr<gantry::NpyArray> again = gantry::ReadNpy(rewritten.path());
  FUZZ_EXPECT(again.ok(), "a written array reads back");
  FUZZ_EXPECT(again->shape == array->shape, "the shape round-trips");
  FUZZ_EXPECT(again->data.size() == array->data.size() &&
                  (numel == 0 || std::memcmp(again->data.data(), array->data.data(), numel * sizeof(float)) == 0),
              "the values round-trip bit for bit");
  return 0;
}
