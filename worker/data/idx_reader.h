// Readers for IDX files, the format of MNIST and Fashion-MNIST: a big-endian header
// (magic, then one int32 per dimension) followed by the unsigned bytes, row-major.
//
// A file may be raw or gzipped; gzip is recognised by its 1f 8b magic, not by the file
// name. Every failure comes back as a Status whose message starts with the path and
// says what is wrong with the file (bad magic, bad dimensions, truncated or overlong
// payload, corrupt gzip stream). The file must hold exactly header + payload bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Unsigned-byte images (IDX magic 2051), row-major: image i, row r, column c is at
// pixels[(i * rows + r) * cols + c].
struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols
};

// The largest rows or cols accepted; anything bigger is taken as a corrupt header.
inline constexpr int64_t kMaxIdxSide = 4096;

absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path);

// Unsigned-byte labels (IDX magic 2049), one per sample.
absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path);

}  // namespace gantry
