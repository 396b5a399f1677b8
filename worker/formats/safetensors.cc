#include "worker/formats/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace gantry {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

constexpr char kMetadataKey[] = "__metadata__";
constexpr StDtype kAllDtypes[] = {StDtype::kF64, StDtype::kF32, StDtype::kF16, StDtype::kBf16, StDtype::kI64};

std::optional<StDtype> ParseDtype(const std::string& name) {
  for (StDtype d : kAllDtypes) {
    if (name == StDtypeName(d)) return d;
  }
  return std::nullopt;
}

// The byte count of dtype x shape, or nullopt when a dimension is negative or it overflows.
std::optional<uint64_t> ByteCount(StDtype dtype, const std::vector<int64_t>& shape) {
  uint64_t n = StDtypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  }
  return n;
}

absl::Status Bad(const std::string& name, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": not a valid safetensors file: ", what));
}

// One tensor's header entry, with its offsets into the byte buffer.
struct Entry {
  StTensor tensor;
  uint64_t begin = 0, end = 0;
};

absl::StatusOr<std::vector<int64_t>> ParseShape(const nlohmann::json& j, const std::string& name,
                                                const std::string& tensor) {
  if (!j.is_array()) return Bad(name, absl::StrCat("tensor '", NameForMessage(tensor), "': \"shape\" is not a list"));
  std::vector<int64_t> shape;
  for (const nlohmann::json& d : j) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 62)) {
      return Bad(name,
                 absl::StrCat("tensor '", NameForMessage(tensor), "': \"shape\" holds something other than a size"));
    }
    shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }
  return shape;
}

absl::StatusOr<Entry> ParseEntry(const std::string& key, const nlohmann::json& j, const std::string& name) {
  if (key.empty()) return Bad(name, "a tensor has an empty name");
  if (!j.is_object()) return Bad(name, absl::StrCat("tensor '", NameForMessage(key), "' is not an object"));
  Entry e;
  e.tensor.name = key;
  const auto dtype = j.find("dtype"), shape = j.find("shape"), offsets = j.find("data_offsets");
  if (dtype == j.end() || shape == j.end() || offsets == j.end()) {
    return Bad(name, absl::StrCat("tensor '", NameForMessage(key), "' lacks \"dtype\", \"shape\" or \"data_offsets\""));
  }
  const std::optional<StDtype> d = dtype->is_string() ? ParseDtype(dtype->get<std::string>()) : std::nullopt;
  if (!d) {
    return Bad(name, absl::StrCat("tensor '", NameForMessage(key), "' has dtype ", dtype->dump(),
                                  "; gantry reads F32, BF16, F16 and F64 (and I64 counters): convert it first"));
  }
  e.tensor.dtype = *d;
  ASSIGN_OR_RETURN(e.tensor.shape, ParseShape(*shape, name, key));
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned()) {
    return Bad(name, absl::StrCat("tensor '", NameForMessage(key), "': \"data_offsets\" is not a pair of offsets"));
  }
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  const std::optional<uint64_t> bytes = ByteCount(e.tensor.dtype, e.tensor.shape);
  if (e.end < e.begin || !bytes || *bytes != e.end - e.begin) {
    return Bad(name, absl::StrCat("tensor '", NameForMessage(key), "': offsets [", e.begin, ", ", e.end,
                                  ") do not hold a ", StDtypeName(e.tensor.dtype), " tensor of shape [",
                                  absl::StrJoin(e.tensor.shape, ", "), "]"));
  }
  return e;
}

absl::StatusOr<std::map<std::string, std::string>> ParseMetadata(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) return Bad(name, "__metadata__ is not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return Bad(name, absl::StrCat("__metadata__ '", key, "' is not a string"));
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// The entries sorted by offset must tile [0, buffer) exactly.
absl::Status CheckCoverage(std::vector<Entry>& entries, uint64_t buffer, const std::string& name) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const Entry& e : entries) {
    if (e.begin != at) {
      return Bad(name, absl::StrCat("tensor '", NameForMessage(e.tensor.name), "' starts at byte ", e.begin,
                                    " of the buffer, but ",
                                    e.begin < at ? "the tensor before it ends at " : "the bytes before it end at ", at,
                                    e.begin < at ? " (overlap)" : " (a hole)"));
    }
    at = e.end;
  }
  if (at != buffer) {
    return Bad(name, absl::StrCat("the tensors cover ", at, " bytes of a ", buffer,
                                  "-byte buffer (the file is truncated or has trailing bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ParseHeader(std::span<const uint8_t> bytes, const std::string& name,
                                           uint64_t* header_length) {
  if (bytes.size() < 8) return Bad(name, absl::StrCat("only ", bytes.size(), " bytes, fewer than the 8 of its length"));
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > kMaxSafetensorsHeaderBytes || n > bytes.size() - 8) {
    return Bad(name, absl::StrCat("a header of ", n, " bytes ",
                                  n > kMaxSafetensorsHeaderBytes ? "is above the 100 MB bound" : "runs past the end",
                                  " (the file holds ", bytes.size(), " bytes)"));
  }
  const uint8_t* text = bytes.data() + 8;
  nlohmann::json header = nlohmann::json::parse(text, text + n, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Bad(name, "the header is not a JSON object");
  *header_length = n;
  return header;
}

}  // namespace

const char* StDtypeName(StDtype dtype) {
  switch (dtype) {
    case StDtype::kF64: return "F64";
    case StDtype::kF32: return "F32";
    case StDtype::kF16: return "F16";
    case StDtype::kBf16: return "BF16";
    case StDtype::kI64: return "I64";
  }
  return "?";
}

size_t StDtypeSize(StDtype dtype) {
  switch (dtype) {
    case StDtype::kF64:
    case StDtype::kI64: return 8;
    case StDtype::kF32: return 4;
    case StDtype::kF16:
    case StDtype::kBf16: return 2;
  }
  return 0;
}

absl::StatusOr<std::string> EncodeSafetensors(const StFile& file) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header[kMetadataKey] = file.metadata;
  uint64_t offset = 0;
  for (const StTensor& t : file.tensors) {
    if (t.name.empty() || t.name == kMetadataKey || header.contains(t.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors: tensor name '", NameForMessage(t.name), "' is empty, reserved or used twice"));
    }
    const std::optional<uint64_t> bytes = ByteCount(t.dtype, t.shape);
    if (!bytes || *bytes != t.bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat("safetensors: tensor '", NameForMessage(t.name), "' has ",
                                                     t.bytes.size(), " bytes for shape [", absl::StrJoin(t.shape, ", "),
                                                     "]"));
    }
    header[t.name] = {{"dtype", std::string(StDtypeName(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + *bytes}}};
    offset += *bytes;
  }
  // Names and metadata are ours or the user's: bytes that are not UTF-8 become U+FFFD
  // rather than failing the export.
  std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const StTensor& t : file.tensors) out += t.bytes;
  return out;
}

absl::Status WriteSafetensors(const std::string& path, const StFile& file) {
  ASSIGN_OR_RETURN(const std::string bytes, EncodeSafetensors(file));
  return CreateFileAtomically(path, bytes);
}

absl::StatusOr<StFile> DecodeSafetensors(std::span<const uint8_t> bytes, const std::string& name) {
  uint64_t n = 0;
  ASSIGN_OR_RETURN(const nlohmann::json header, ParseHeader(bytes, name, &n));
  StFile file;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      ASSIGN_OR_RETURN(file.metadata, ParseMetadata(value, name));
      continue;
    }
    ASSIGN_OR_RETURN(Entry e, ParseEntry(key, value, name));
    entries.push_back(std::move(e));
  }
  const uint64_t buffer = bytes.size() - 8 - n;
  RETURN_IF_ERROR(CheckCoverage(entries, buffer, name));
  const uint8_t* data = bytes.data() + 8 + n;
  for (Entry& e : entries) {
    e.tensor.bytes.assign(reinterpret_cast<const char*>(data + e.begin), e.end - e.begin);
    file.tensors.push_back(std::move(e.tensor));
  }
  return file;
}

absl::StatusOr<StFile> ReadSafetensors(const std::string& path) {
  ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ReadFileBytes(path, kMaxSafetensorsBytes));
  return DecodeSafetensors(bytes, path);
}

}  // namespace gantry
