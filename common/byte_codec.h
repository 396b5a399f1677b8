// Little-endian binary encoding of plain values, for file formats (checkpoints).
//
// ByteWriter appends fixed-width integers, floats, strings and arrays to a byte vector.
// ByteReader reads them back in the same order. Reading past the end does not fail at
// every call: the reader records the first fault (naming the field being read and the
// source), returns zeros/empties from then on, and status() reports it, so a decoder
// reads a whole record and checks once. Arrays carry their element count first; a count
// that cannot fit in the remaining bytes is a fault before anything is allocated.
//
// The host must be little-endian (checked at compile time): floats and integers are
// copied as they lie in memory.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gantry {

static_assert(std::endian::native == std::endian::little, "byte_codec assumes a little-endian host");

class ByteWriter {
 public:
  void U32(uint32_t v) { Raw(&v, sizeof(v)); }
  void U64(uint64_t v) { Raw(&v, sizeof(v)); }
  void I64(int64_t v) { Raw(&v, sizeof(v)); }
  void F32(float v) { Raw(&v, sizeof(v)); }
  void F64(double v) { Raw(&v, sizeof(v)); }
  void String(const std::string& s);               // u64 length, then the bytes
  void Floats(std::span<const float> values);      // u64 count, then the values
  void Doubles(std::span<const double> values);
  void I64s(std::span<const int64_t> values);
  void Raw(const void* data, size_t size);
  // Overwrites 4 bytes already written at `offset` (a field whose value is known later).
  void PatchU32(size_t offset, uint32_t v);
  // Makes room for `more` further bytes at once (large arrays: one allocation).
  void Reserve(size_t more) { bytes_.reserve(bytes_.size() + more); }
  size_t size() const { return bytes_.size(); }

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> Take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  // `source` names what is read (e.g. "ckpt-40.bin: position section") in faults.
  ByteReader(std::span<const uint8_t> bytes, std::string source) : bytes_(bytes), source_(std::move(source)) {}

  // Each reads the next value; `field` names it in the fault when the bytes run out.
  uint32_t U32(const char* field);
  uint64_t U64(const char* field);
  int64_t I64(const char* field);
  float F32(const char* field);
  double F64(const char* field);
  std::string String(const char* field);
  std::vector<float> Floats(const char* field);
  std::vector<double> Doubles(const char* field);
  std::vector<int64_t> I64s(const char* field);

  size_t remaining() const { return bytes_.size() - pos_; }
  // OK, or DATA_LOSS naming the source and the first field that could not be read.
  const absl::Status& status() const { return status_; }
  // status(), or a fault when bytes are left over (the record is longer than expected).
  absl::Status Finish() const;

 private:
  bool Take(void* out, size_t size, const char* field);
  // The element count of an array whose elements take `element_size` bytes.
  size_t Count(size_t element_size, const char* field);
  template <typename T>
  std::vector<T> Array(const char* field);

  std::span<const uint8_t> bytes_;
  std::string source_;
  size_t pos_ = 0;
  absl::Status status_;
};

}  // namespace gantry
