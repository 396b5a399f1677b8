#include "worker/checkpoint/checkpoint_format.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/byte_codec.h"

namespace gantry {
namespace {

constexpr char kMagic[8] = {'G', 'A', 'N', 'T', 'R', 'Y', 'C', 'K'};
constexpr size_t kHeaderCrcOffset = 28;
constexpr size_t kSectionFrameBytes = 16;
constexpr uint32_t kLastKnownTag = static_cast<uint32_t>(SectionTag::kEpochHiddenAllReduce);

absl::Status Corrupt(const std::string& name, const std::string& what) {
  return absl::DataLossError(absl::StrCat(name, ": ", what));
}

// The sections of an already checked payload.
absl::StatusOr<std::vector<SectionView>> SplitSections(std::span<const uint8_t> payload, const std::string& name) {
  std::vector<SectionView> sections;
  std::vector<bool> seen(kLastKnownTag + 1, false);
  size_t pos = 0;
  while (pos < payload.size()) {
    ByteReader frame(payload.subspan(pos, std::min(kSectionFrameBytes, payload.size() - pos)),
                     absl::StrCat(name, ": section frame at payload offset ", pos));
    const uint32_t tag = frame.U32("tag");
    frame.U32("reserved");
    const uint64_t size = frame.U64("size");
    if (!frame.status().ok()) return frame.status();
    pos += kSectionFrameBytes;
    if (size > payload.size() - pos) {
      return Corrupt(name, absl::StrCat("section ", tag, " claims ", size, " bytes, the payload has ",
                                        payload.size() - pos, " left"));
    }
    const std::span<const uint8_t> body = payload.subspan(pos, static_cast<size_t>(size));
    pos += static_cast<size_t>(size);
    if (tag == 0 || tag > kLastKnownTag) continue;  // a later format's addition
    if (seen[tag]) {
      return Corrupt(name, absl::StrCat("the ", SectionName(static_cast<SectionTag>(tag)), " section occurs twice"));
    }
    seen[tag] = true;
    sections.push_back({static_cast<SectionTag>(tag), body});
  }
  return sections;
}

}  // namespace

std::string SectionName(SectionTag tag) {
  switch (tag) {
    case SectionTag::kPosition: return "position";
    case SectionTag::kGenerator: return "generator";
    case SectionTag::kDiscriminator: return "discriminator";
    case SectionTag::kGeneratorOptimizer: return "generator optimizer";
    case SectionTag::kDiscriminatorOptimizer: return "discriminator optimizer";
    case SectionTag::kLossScalers: return "loss scalers";
    case SectionTag::kShares: return "shares";
    case SectionTag::kEpochInProgress: return "epoch in progress";
    case SectionTag::kEpochRows: return "epoch rows";
    case SectionTag::kStragglerRows: return "straggler rows";
    case SectionTag::kModel: return "model";
    case SectionTag::kEpochRowColumns: return "epoch row columns";
    case SectionTag::kGeneratorAverage: return "generator average";
    case SectionTag::kAugment: return "augment";
    case SectionTag::kSettings: return "settings";
    case SectionTag::kEpochHiddenAllReduce: return "hidden all-reduce time";
  }
  return absl::StrCat("section ", static_cast<uint32_t>(tag));
}

uint32_t Crc32(std::span<const uint8_t> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  constexpr size_t kChunk = std::numeric_limits<uInt>::max();  // zlib takes 32-bit lengths
  for (size_t pos = 0; pos < bytes.size(); pos += kChunk) {
    const size_t n = std::min(kChunk, bytes.size() - pos);
    crc = crc32(crc, bytes.data() + pos, static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

std::vector<uint8_t> FrameCheckpoint(const std::vector<SectionBytes>& sections) {
  size_t payload_bytes = 0;
  for (const SectionBytes& s : sections) payload_bytes += kSectionFrameBytes + s.bytes.size();
  ByteWriter file;
  file.Reserve(kCheckpointHeaderBytes + payload_bytes);  // one allocation for a file of tens of MiB
  file.Raw(kMagic, sizeof(kMagic));
  file.U32(kCheckpointVersion);
  file.U32(static_cast<uint32_t>(kCheckpointHeaderBytes));
  file.U64(payload_bytes);
  file.U32(0);  // payload CRC, patched below
  file.U32(0);  // header CRC, patched below
  for (const SectionBytes& s : sections) {
    file.U32(static_cast<uint32_t>(s.tag));
    file.U32(0);
    file.U64(s.bytes.size());
    file.Raw(s.bytes.data(), s.bytes.size());
  }
  const std::span<const uint8_t> all(file.bytes());
  file.PatchU32(kHeaderCrcOffset - 4, Crc32(all.subspan(kCheckpointHeaderBytes)));
  file.PatchU32(kHeaderCrcOffset, Crc32(all.first(kHeaderCrcOffset)));
  return file.Take();
}

absl::StatusOr<std::vector<SectionView>> UnframeCheckpoint(std::span<const uint8_t> file, const std::string& name) {
  if (file.size() < kCheckpointHeaderBytes) {
    return Corrupt(name, absl::StrCat("truncated: ", file.size(), " bytes, less than the ", kCheckpointHeaderBytes,
                                      "-byte header (a torn write?)"));
  }
  if (std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) {
    return Corrupt(name, "not a gantry checkpoint (bad magic bytes)");
  }
  ByteReader header(file.subspan(sizeof(kMagic), kCheckpointHeaderBytes - sizeof(kMagic)), name);
  const uint32_t version = header.U32("version");
  const uint32_t header_bytes = header.U32("header size");
  const uint64_t payload_bytes = header.U64("payload size");
  const uint32_t payload_crc = header.U32("payload crc");
  const uint32_t header_crc = header.U32("header crc");
  if (version != kCheckpointVersion) {
    return absl::FailedPreconditionError(absl::StrCat(name, ": checkpoint format version ", version,
                                                      ", this gantry reads version ", kCheckpointVersion,
                                                      " (written by another gantry version?)"));
  }
  if (Crc32(file.first(kHeaderCrcOffset)) != header_crc || header_bytes != kCheckpointHeaderBytes) {
    return Corrupt(name, "header checksum mismatch: the header is corrupt");
  }
  const size_t have = file.size() - kCheckpointHeaderBytes;
  if (payload_bytes > have) {
    return Corrupt(name, absl::StrCat("truncated: the header announces ", payload_bytes, " payload bytes, the file holds ",
                                      have, " (a torn write?)"));
  }
  if (payload_bytes < have) {
    return Corrupt(name, absl::StrCat(have - payload_bytes, " unexpected bytes after the payload"));
  }
  const std::span<const uint8_t> payload = file.subspan(kCheckpointHeaderBytes);
  const uint32_t computed = Crc32(payload);
  if (computed != payload_crc) {
    return Corrupt(name, absl::StrFormat("checksum mismatch (stored crc32 %08x, computed %08x): the file is corrupt",
                                         payload_crc, computed));
  }
  return SplitSections(payload, name);
}

}  // namespace gantry
