// safetensors files (the format of Hugging Face's safetensors library, which PyTorch
// pipelines read): named tensors, so gantry's trained networks can be loaded elsewhere
// and weights made elsewhere can start a gantry run. Bytes in and out, no tensors.
//
// Layout (docs/export.md): an 8-byte little-endian unsigned header length N; N bytes of
// a UTF-8 JSON object mapping each tensor's name to {"dtype", "shape", "data_offsets":
// [begin, end]} (offsets into the byte buffer that follows), plus an optional
// "__metadata__" object of string values; then the byte buffer, every tensor's values
// little-endian in C order, the tensors covering it exactly (no holes, no overlaps).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// The element types gantry reads: floating point (narrowed to or widened from fp32 by
// the caller) and I64 (PyTorch's BatchNorm num_batches_tracked counters).
enum class StDtype { kF64, kF32, kF16, kBf16, kI64 };

const char* StDtypeName(StDtype dtype);  // "F32", "BF16", ...
size_t StDtypeSize(StDtype dtype);

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::kF32;
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  std::string bytes;           // the values, little-endian, C order
};

struct StFile {
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::vector<StTensor> tensors;                // in byte-buffer order
};

// The largest file ReadSafetensors reads, and the largest header it parses (the
// safetensors library's own bound on the header).
inline constexpr size_t kMaxSafetensorsBytes = size_t{8} << 30;
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// The file's bytes: the tensors in the given order, the header padded with spaces to a
// multiple of 8 bytes (so the buffer starts aligned). INVALID_ARGUMENT for a duplicate
// or empty name, the reserved name "__metadata__", or bytes that do not match a shape.
absl::StatusOr<std::string> EncodeSafetensors(const StFile& file);

// Writes a new file atomically (temporary name, fsync, then PublishWithoutReplacing): a
// reader never sees part of it, and it never replaces anything: ALREADY_EXISTS naming
// `path` when something is there by then (a file created since the caller checked, or
// a concurrent writer's), which is left as it is.
absl::Status WriteSafetensors(const std::string& path, const StFile& file);

// Parses a whole file's bytes; `name` (the path) starts every error. INVALID_ARGUMENT,
// saying what is wrong, for: fewer than 8 bytes, a header length past the end or above
// kMaxSafetensorsHeaderBytes, a header that is not a JSON object, a tensor with an empty name or without
// a known dtype, a shape of non-negative integers and two offsets, offsets out of order,
// overlapping, leaving holes or not ending at the end of the file, a byte count that
// does not match dtype x shape, or __metadata__ that is not an object of strings.
absl::StatusOr<StFile> DecodeSafetensors(std::span<const uint8_t> bytes, const std::string& name);

// Reads and decodes `path` (at most kMaxSafetensorsBytes; errors name the path).
absl::StatusOr<StFile> ReadSafetensors(const std::string& path);

}  // namespace gantry
