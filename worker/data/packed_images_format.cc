#include "worker/data/packed_images_format.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/byte_codec.h"
#include "common/printable_text.h"
#include "worker/formats/image_fit.h"
#include "worker/formats/image_resample.h"

namespace gantry {
namespace {

constexpr int64_t kHeaderCrcAt = 124;
constexpr int64_t kReservedAt = 108;
constexpr int64_t kReservedBytes = 16;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

absl::Status Damaged(const std::string& what) { return absl::DataLossError(what); }

// a * b + c when it fits in int64 (all non-negative); -1 otherwise.
int64_t MulAdd(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(product, c, &sum)) return -1;
  return sum;
}

// The header's u64 fields, refused when one does not fit an int64.
absl::StatusOr<int64_t> Field(const uint8_t* header, int64_t at, const char* name) {
  const uint64_t v = LoadLe64(header + at);
  if (v > static_cast<uint64_t>(kInt64Max)) return Damaged(absl::StrCat("the header's ", name, " (", v, ") overflows"));
  return static_cast<int64_t>(v);
}

}  // namespace

absl::Status CheckPackedSettings(const PackedImagesInfo& info) {
  absl::StatusOr<ImageFit> fit = ParseImageFit(info.fit);
  absl::StatusOr<AlphaHandling> alpha = ParseAlphaHandling(info.alpha);
  if (!fit.ok() || !alpha.ok() || info.filter != kResampleFilterName) {
    return Damaged(absl::StrCat("unknown settings: fit '", EscapeForTerminal(info.fit), "', alpha '",
                                EscapeForTerminal(info.alpha), "', filter '", EscapeForTerminal(info.filter), "'"));
  }
  const bool keep = *alpha == AlphaHandling::kKeep;
  if ((keep && info.channels != 2 && info.channels != 4) || (!keep && info.channels != 1 && info.channels != 3)) {
    return Damaged(absl::StrCat(info.channels, " channels do not go with alpha ", info.alpha));
  }
  std::set<std::string> seen;
  for (const std::string& name : info.class_names) {
    if (name.empty() || !seen.insert(name).second) {
      return Damaged(absl::StrCat("class name '", EscapeForTerminal(name), "' is empty or repeated"));
    }
  }
  return absl::OkStatus();
}

uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint32_t PackedCrc(const uint8_t* bytes, size_t n, uint32_t crc) {
  // zlib's crc32 takes uInt lengths: feed it 1 GiB at a time.
  constexpr size_t kChunk = size_t{1} << 30;
  while (n > 0) {
    const size_t take = std::min(n, kChunk);
    crc = static_cast<uint32_t>(crc32(crc, bytes, static_cast<uInt>(take)));
    bytes += take;
    n -= take;
  }
  return crc;
}

int64_t PackedRecordStride(int64_t image_size, int64_t channels) {
  const int64_t bytes = channels * image_size * image_size;
  return (bytes + kPackedRecordAlignment - 1) / kPackedRecordAlignment * kPackedRecordAlignment;
}

std::string EncodePackedHeader(const PackedHeader& h) {
  ByteWriter w;
  w.Raw(kPackedImagesMagic, sizeof(kPackedImagesMagic));
  w.U32(kPackedImagesVersion);
  w.U32(static_cast<uint32_t>(kPackedHeaderBytes));
  for (int64_t v : {h.image_size, h.channels, h.count, h.record_stride, h.records_offset, h.index_offset, h.index_bytes,
                    h.strings_offset, h.strings_bytes, h.class_count, h.file_bytes}) {
    w.U64(static_cast<uint64_t>(v));
  }
  w.U32(h.trailer_crc);
  const uint8_t zero[kReservedBytes] = {};
  w.Raw(zero, sizeof(zero));
  w.U32(PackedCrc(w.bytes().data(), w.bytes().size()));
  return std::string(w.bytes().begin(), w.bytes().end());
}

absl::StatusOr<PackedHeader> DecodePackedHeader(absl::string_view text, int64_t file_bytes) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  if (text.size() < sizeof(kPackedImagesMagic) ||
      std::memcmp(bytes, kPackedImagesMagic, sizeof(kPackedImagesMagic)) != 0) {
    return absl::InvalidArgumentError("not a packed image set (it does not start with GANTRYPK)");
  }
  if (file_bytes < kPackedHeaderBytes || static_cast<int64_t>(text.size()) < kPackedHeaderBytes) {
    return Damaged(
        absl::StrCat("truncated: ", file_bytes, " bytes, less than the ", kPackedHeaderBytes, "-byte header"));
  }
  const uint32_t version = LoadLe32(bytes + 8);
  if (version != kPackedImagesVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("format version ", version, "; this gantry reads version ", kPackedImagesVersion));
  }
  if (PackedCrc(bytes, kHeaderCrcAt) != LoadLe32(bytes + kHeaderCrcAt)) {
    return Damaged("the header's CRC does not match: the header is damaged");
  }
  if (LoadLe32(bytes + 12) != kPackedHeaderBytes ||
      std::any_of(bytes + kReservedAt, bytes + kReservedAt + kReservedBytes, [](uint8_t b) { return b != 0; })) {
    return Damaged("the header's size or reserved bytes are wrong");
  }
  PackedHeader h;
  int64_t* fields[] = {&h.image_size,     &h.channels,     &h.count,       &h.record_stride,
                       &h.records_offset, &h.index_offset, &h.index_bytes, &h.strings_offset,
                       &h.strings_bytes,  &h.class_count,  &h.file_bytes};
  const char* names[] = {"image size",     "channels",     "count",       "record stride",
                         "records offset", "index offset", "index bytes", "strings offset",
                         "strings bytes",  "class count",  "file bytes"};
  for (size_t i = 0; i < std::size(fields); ++i) {
    absl::StatusOr<int64_t> v = Field(bytes, 16 + 8 * static_cast<int64_t>(i), names[i]);
    if (!v.ok()) return v.status();
    *fields[i] = *v;
  }
  h.trailer_crc = LoadLe32(bytes + 104);

  if (h.image_size < kMinFitSize || h.image_size > kMaxFitSize) {
    return Damaged(absl::StrCat("image size ", h.image_size, " is outside ", kMinFitSize, "..", kMaxFitSize));
  }
  if (h.channels < 1 || h.channels > 4) return Damaged(absl::StrCat("channels ", h.channels, " is outside 1..4"));
  if (h.count < 1) return Damaged("it holds no records");
  if (h.record_stride != PackedRecordStride(h.image_size, h.channels)) {
    return Damaged(absl::StrCat("record stride ", h.record_stride, " does not match ", h.channels, "x", h.image_size,
                                "x", h.image_size, " records"));
  }
  if (h.records_offset != kPackedHeaderBytes) {
    return Damaged(absl::StrCat("records offset ", h.records_offset, " is not ", kPackedHeaderBytes));
  }
  if (MulAdd(h.count, h.record_stride, h.records_offset) != h.index_offset) {
    return Damaged(absl::StrCat("index offset ", h.index_offset, " does not follow ", h.count, " records"));
  }
  if (MulAdd(h.count, kPackedIndexEntryBytes, 0) != h.index_bytes) {
    return Damaged(absl::StrCat("index bytes ", h.index_bytes, " do not match ", h.count, " records"));
  }
  if (MulAdd(1, h.index_offset, h.index_bytes) != h.strings_offset) {
    return Damaged(absl::StrCat("strings offset ", h.strings_offset, " does not follow the index"));
  }
  // Every string takes at least its 4-byte length: count sources, 3 settings, the classes.
  if (h.class_count > h.strings_bytes / 4 || MulAdd(h.count + 3 + h.class_count, 4, 0) > h.strings_bytes) {
    return Damaged(absl::StrCat("strings bytes ", h.strings_bytes, " cannot hold ", h.count,
                                " sources, 3 settings and ", h.class_count, " class names"));
  }
  if (MulAdd(1, h.strings_offset, h.strings_bytes) != h.file_bytes) {
    return Damaged(absl::StrCat("file bytes ", h.file_bytes, " do not match the sections"));
  }
  if (file_bytes < h.file_bytes) {
    return Damaged(absl::StrCat("truncated: the header says ", h.file_bytes, " bytes, the file has ", file_bytes));
  }
  if (file_bytes > h.file_bytes) {
    return Damaged(absl::StrCat(file_bytes - h.file_bytes, " bytes after the ", h.file_bytes, " its header gives"));
  }
  return h;
}

}  // namespace gantry
