// The container of a checkpoint file: a fixed header, then a payload of tagged sections,
// with a CRC-32 (zlib's) over the payload and another over the header.
//
//   offset  size  field
//        0     8  magic "GANTRYCK"
//        8     4  format version (kCheckpointVersion)
//       12     4  header size in bytes (32)
//       16     8  payload size in bytes
//       24     4  CRC-32 of the payload
//       28     4  CRC-32 of bytes 0..27
//       32     .  payload: sections, each u32 tag, u32 0, u64 size, then `size` bytes
// All integers little-endian. A reader checks, in this order: the file holds a header,
// the magic, the version (so a newer format is named as such, not as corruption), the
// header's CRC, that the file holds exactly the announced payload (fewer bytes: a torn
// write; more: trailing garbage), the payload's CRC, and the section framing. Sections
// with unknown tags are skipped; what each known section holds is checkpoint_codec's
// business.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

inline constexpr uint32_t kCheckpointVersion = 1;
inline constexpr size_t kCheckpointHeaderBytes = 32;

enum class SectionTag : uint32_t {
  kPosition = 1,
  kGenerator = 2,
  kDiscriminator = 3,
  kGeneratorOptimizer = 4,
  kDiscriminatorOptimizer = 5,
  kLossScalers = 6,
  kShares = 7,
  kEpochInProgress = 8,
  kEpochRows = 9,
  kStragglerRows = 10,
  kModel = 11,             // the --model name; absent in checkpoints from before the model seam (DCGAN)
  kEpochRowColumns = 12,   // the epoch rows' columns after the first 20, by name; absent in older checkpoints
  kGeneratorAverage = 13,  // --g-ema: the generator's weight average; absent without one
  kAugment = 14,           // --augment's policy name; absent without one (off)
  kSettings = 15,          // the settings record (digest, then name/value pairs); absent in older checkpoints
  kEpochHiddenAllReduce = 16,  // the epoch in progress's all-reduce seconds hidden by --overlap; absent: 0
};

// "position", "generator", ...: how errors name a section.
std::string SectionName(SectionTag tag);

struct SectionBytes {
  SectionTag tag;
  std::vector<uint8_t> bytes;
};

// A view of one section inside a checkpoint file's bytes.
struct SectionView {
  SectionTag tag;
  std::span<const uint8_t> bytes;
};

// The file's bytes: header, then the sections in the order given.
std::vector<uint8_t> FrameCheckpoint(const std::vector<SectionBytes>& sections);

// Checks a checkpoint file's bytes (see the order above) and returns views of its
// sections of known tags, in file order. Errors are DATA_LOSS (corrupt or torn) or
// FAILED_PRECONDITION (another format version), their messages start with `name` and
// say what is wrong. A tag that occurs twice is an error.
absl::StatusOr<std::vector<SectionView>> UnframeCheckpoint(std::span<const uint8_t> file, const std::string& name);

// zlib's CRC-32 of `bytes` (any length).
uint32_t Crc32(std::span<const uint8_t> bytes);

}  // namespace gantry
