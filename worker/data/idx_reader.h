// Readers for IDX files, the format of MNIST and Fashion-MNIST: a big-endian header
// (magic, then one int32 per dimension) followed by the unsigned bytes, row-major.
//
// A file may be raw or gzipped; gzip is recognised by its 1f 8b magic, not by the file
// name. The header is read first and checked (magic, dimensions, a payload of at most
// kMaxIdxPayloadBytes); then exactly the bytes it promises are read, and one more to see
// that nothing follows. So a damaged or hostile file costs at most what its header
// promises: a gzip bomb behind an honest-looking header is refused after the header's
// payload + 1 byte, a raw file whose size disagrees with its header is refused before
// its payload is read, and what is not a regular file (a FIFO, a link to /dev/zero) is
// refused without waiting on it (file_stream.h).
//
// Every failure comes back as a Status whose message starts with the path and says what
// is wrong with the file (bad magic, bad dimensions, truncated or overlong payload,
// corrupt gzip stream).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/file_stream.h"

namespace gantry {

// The largest rows or cols accepted; anything bigger is taken as a corrupt header.
inline constexpr int64_t kMaxIdxSide = 4096;
// The largest payload read from one IDX file (2 GiB; MNIST's images are 47 MB). The
// images are held as floats, 4 bytes per pixel, so a larger set would not fit anyway.
inline constexpr int64_t kMaxIdxPayloadBytes = int64_t{1} << 31;

// An IDX file whose header has been read and checked; its payload not yet.
class IdxFile {
 public:
  // Images (magic 2051: count, rows, cols) or labels (magic 2049: count).
  static absl::StatusOr<IdxFile> OpenImages(const std::string& path);
  static absl::StatusOr<IdxFile> OpenLabels(const std::string& path);

  const std::string& path() const { return stream_->path(); }
  // {count, rows, cols} for images, {count} for labels.
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t count() const { return dims_[0]; }
  int64_t payload_bytes() const { return payload_bytes_; }

  // Exactly payload_bytes() bytes; an error when the file holds fewer or more. Call once.
  absl::StatusOr<std::vector<uint8_t>> ReadPayload();

 private:
  static absl::StatusOr<IdxFile> Open(const std::string& path, uint32_t magic, const std::vector<int64_t>& max);
  std::unique_ptr<FileStream> stream_;
  std::vector<int64_t> dims_;
  int64_t header_bytes_ = 0;
  int64_t payload_bytes_ = 0;
  std::string described_;  // "3 images of 2x4", "5 labels"
};

// Unsigned-byte images (IDX magic 2051), row-major: image i, row r, column c is at
// pixels[(i * rows + r) * cols + c].
struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols
};

absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path);

// Unsigned-byte labels (IDX magic 2049), one per sample.
absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path);

}  // namespace gantry
