// A packed image set (gantry-worker make-dataset's output; the layout is in
// packed_images_format.h) opened for reading: mapped into memory, every record a
// pointer to its C*N*N bytes (CHW), read by index without decoding.
//
// Open verifies everything before it returns, so nothing read later can be wrong: the
// header (magic, version, CRC, sizes that add up without overflow, the file's length),
// the index and strings (their CRC; every label in range; every source path where the
// index says, in order; the settings known; class names distinct and non-empty) and
// every record against its CRC, plus the zero padding after it. A refusal names the
// file, says what is wrong, and ends "remake it with gantry-worker make-dataset".
//
// The cost of opening is reading the whole file once: zlib's CRC-32 of every byte, 0.5 to
// 0.8 s per GB on the 2-core AMD EPYC this was written on (1.2 to 1.9 GB/s by the load;
// docs/images.md, from bench/image_decode_bench.cc, which measures it), plus the disk
// when the file is not in the page cache. The pages stay in the page cache, shared by every process that maps
// the file, not in this process's own memory; the reader keeps nothing per record. The
// file must not be changed while it is open (make-dataset never writes over one): as
// with any mapping, reading a page that was cut off the file faults (SIGBUS).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/packed_images_format.h"  // PackedImagesInfo

namespace gantry {

class PackedImages {
 public:
  // Maps and verifies `path` (see above). INVALID_ARGUMENT for what is no packed image
  // set (or another version, or not a regular file), DATA_LOSS for damage, an errno's
  // code for a file that cannot be read.
  static absl::StatusOr<std::unique_ptr<PackedImages>> Open(const std::string& path);
  ~PackedImages();
  PackedImages(const PackedImages&) = delete;
  PackedImages& operator=(const PackedImages&) = delete;

  const PackedImagesInfo& info() const { return info_; }
  const std::string& path() const { return path_; }
  int64_t record_bytes() const { return record_bytes_; }  // channels * size * size
  // Record i's CHW bytes (0 <= i < count), valid while this object lives.
  const uint8_t* record(int64_t i) const;
  // Record i's class, an index into info().class_names; -1 when unlabelled.
  int label(int64_t i) const;
  // The path, relative to the folder that was packed, that record i came from (its bytes
  // as the file system gave them: not necessarily UTF-8).
  std::string source(int64_t i) const;

 private:
  PackedImages() = default;
  absl::Status Verify();

  std::string path_;
  const uint8_t* map_ = nullptr;
  size_t map_bytes_ = 0;
  PackedImagesInfo info_;
  int64_t record_bytes_ = 0;
  int64_t record_stride_ = 0;
  int64_t records_offset_ = 0;
  int64_t index_offset_ = 0;
  int64_t strings_offset_ = 0;
};

}  // namespace gantry
