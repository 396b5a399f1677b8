// Fuzz target: the checkpoint decoder (worker/checkpoint/checkpoint_codec.h and the container
// of checkpoint_format.h).
//
// Input: one mode byte, then bytes. Mode bit 0 clear: the bytes are the whole file, so
// the container's checks (magic, version, header and payload CRCs, framing) are what
// gets explored. Set: the bytes are the payload (the sections) and a valid header with
// both CRCs is put in front, so mutations reach the section decoders instead of dying
// at the CRC check.
//
// Every input must decode or fail with a status, never crash. A decoded state must
// encode to a file that decodes again to a state that encodes to the same bytes (a
// checkpoint that was read can be written and read back unchanged).
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tests/fuzz/fuzz_support.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_format.h"

namespace {

void PutLe(std::vector<uint8_t>& out, size_t offset, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

// A checkpoint file with a valid header around `payload` (see checkpoint_format.h).
std::vector<uint8_t> Framed(std::span<const uint8_t> payload) {
  std::vector<uint8_t> file(gantry::kCheckpointHeaderBytes);
  std::memcpy(file.data(), "GANTRYCK", 8);
  PutLe(file, 8, gantry::kCheckpointVersion, 4);
  PutLe(file, 12, gantry::kCheckpointHeaderBytes, 4);
  PutLe(file, 16, payload.size(), 8);
  PutLe(file, 24, gantry::Crc32(payload), 4);
  PutLe(file, 28, gantry::Crc32(std::span<const uint8_t>(file.data(), 28)), 4);
  file.insert(file.end(), payload.begin(), payload.end());
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> rest(data + 1, size - 1);
  const std::vector<uint8_t> file = (data[0] & 1) != 0 ? Framed(rest) : std::vector<uint8_t>(rest.begin(), rest.end());

  const absl::StatusOr<gantry::TrainingState> state = gantry::DecodeCheckpoint(file, "fuzz.bin");
  if (!state.ok()) {
    FUZZ_EXPECT(!state.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  const std::vector<uint8_t> encoded = gantry::EncodeCheckpoint(*state);
  const absl::StatusOr<gantry::TrainingState> again = gantry::DecodeCheckpoint(encoded, "fuzz-rewritten.bin");
  FUZZ_EXPECT(again.ok(), "a decoded state encodes to a file that decodes");
  FUZZ_EXPECT(gantry::EncodeCheckpoint(*again) == encoded, "encode(decode(encode(state))) == encode(state)");
  return 0;
}
