#include "common/byte_codec.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace gantry {

void ByteWriter::Raw(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), p, p + size);
}

void ByteWriter::PatchU32(size_t offset, uint32_t v) {
  CHECK_LE(offset + sizeof(v), bytes_.size()) << "patch beyond the written bytes";
  std::memcpy(bytes_.data() + offset, &v, sizeof(v));
}

void ByteWriter::String(const std::string& s) {
  U64(s.size());
  Raw(s.data(), s.size());
}

void ByteWriter::Floats(std::span<const float> values) {
  U64(values.size());
  Raw(values.data(), values.size_bytes());
}

void ByteWriter::Doubles(std::span<const double> values) {
  U64(values.size());
  Raw(values.data(), values.size_bytes());
}

void ByteWriter::I64s(std::span<const int64_t> values) {
  U64(values.size());
  Raw(values.data(), values.size_bytes());
}

bool ByteReader::Take(void* out, size_t size, const char* field) {
  if (!status_.ok()) return false;
  if (size > remaining()) {
    status_ = absl::DataLossError(absl::StrCat(source_, ": ends early, reading ", field, " (", size,
                                               " bytes wanted, ", remaining(), " left)"));
    return false;
  }
  if (size > 0) std::memcpy(out, bytes_.data() + pos_, size);
  pos_ += size;
  return true;
}

uint32_t ByteReader::U32(const char* field) {
  uint32_t v = 0;
  Take(&v, sizeof(v), field);
  return v;
}

uint64_t ByteReader::U64(const char* field) {
  uint64_t v = 0;
  Take(&v, sizeof(v), field);
  return v;
}

int64_t ByteReader::I64(const char* field) {
  int64_t v = 0;
  Take(&v, sizeof(v), field);
  return v;
}

float ByteReader::F32(const char* field) {
  float v = 0;
  Take(&v, sizeof(v), field);
  return v;
}

double ByteReader::F64(const char* field) {
  double v = 0;
  Take(&v, sizeof(v), field);
  return v;
}

size_t ByteReader::Count(size_t element_size, const char* field) {
  const uint64_t count = U64(field);
  if (!status_.ok()) return 0;
  if (count > remaining() / element_size) {
    status_ = absl::DataLossError(absl::StrCat(source_, ": ", field, " claims ", count, " elements of ", element_size,
                                               " bytes, but only ", remaining(), " bytes are left"));
    return 0;
  }
  return static_cast<size_t>(count);
}

template <typename T>
std::vector<T> ByteReader::Array(const char* field) {
  std::vector<T> out(Count(sizeof(T), field));
  Take(out.data(), out.size() * sizeof(T), field);
  return out;
}

std::string ByteReader::String(const char* field) {
  std::string s(Count(1, field), '\0');
  Take(s.data(), s.size(), field);
  return s;
}

std::vector<float> ByteReader::Floats(const char* field) { return Array<float>(field); }
std::vector<double> ByteReader::Doubles(const char* field) { return Array<double>(field); }
std::vector<int64_t> ByteReader::I64s(const char* field) { return Array<int64_t>(field); }

absl::Status ByteReader::Finish() const {
  if (!status_.ok()) return status_;
  if (remaining() != 0) {
    return absl::DataLossError(absl::StrCat(source_, ": ", remaining(), " unexpected bytes after the last field"));
  }
  return absl::OkStatus();
}

}  // namespace gantry
