#include "common/record_file.h"

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"

namespace gantry {
namespace {

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

uint64_t GetLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

void AppendRecord(std::string_view data, std::string* out) {
  std::string header;
  PutLe(data.size(), 8, &header);
  out->append(header);
  PutLe(MaskCrc32c(Crc32c(AsBytes(header))), 4, out);
  out->append(data);
  PutLe(MaskCrc32c(Crc32c(AsBytes(data))), 4, out);
}

absl::StatusOr<std::vector<std::string>> ReadRecords(std::span<const uint8_t> file, const std::string& name) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < file.size()) {
    const std::string where = absl::StrCat(name, ": record ", records.size(), " at byte ", at);
    if (file.size() - at < 12) return absl::DataLossError(absl::StrCat(where, ": the file ends inside its header"));
    const uint64_t length = GetLe(file.data() + at, 8);
    if (MaskCrc32c(Crc32c(file.subspan(at, 8))) != GetLe(file.data() + at + 8, 4)) {
      return absl::DataLossError(absl::StrCat(where, ": the length's CRC does not match"));
    }
    if (length > file.size() - at - 12 || file.size() - at - 12 - length < 4) {
      return absl::DataLossError(absl::StrCat(where, ": the file ends inside its ", length, " data bytes"));
    }
    const std::span<const uint8_t> data = file.subspan(at + 12, length);
    if (MaskCrc32c(Crc32c(data)) != GetLe(file.data() + at + 12 + length, 4)) {
      return absl::DataLossError(absl::StrCat(where, ": the data's CRC does not match"));
    }
    records.emplace_back(reinterpret_cast<const char*>(data.data()), data.size());
    at += 12 + length + 4;
  }
  return records;
}

}  // namespace gantry
