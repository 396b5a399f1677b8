// Writes a packed image set (the layout is in packed_images_format.h) as records come,
// in constant memory, and publishes it only when it is whole.
//
// The records stream into a temporary file next to the destination
// ("<path>.tmp.<pid>.<n>"); each record's index entry and source path go to two
// unnamed scratch files in the same folder (O_TMPFILE; created and unlinked at once
// where the file system lacks it), so memory does not grow with the count. Finish
// appends the index and strings, writes the header, fsyncs, and moves the file to its
// path with PublishWithoutReplacing: an existing file is never replaced, not even one
// that appeared while the records were written. Any failure (a full disk, a write
// error, the caller giving up) removes the temporary file and leaves the destination
// untouched; only a process killed outright (SIGKILL, a power cut) leaves the
// temporary file behind, under its telling name.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/data/packed_images_format.h"

namespace gantry {

class PackedImagesWriter {
 public:
  // `layout` gives image_size, channels and the settings (fit, alpha, filter), which
  // CheckPackedSettings must accept (else INVALID_ARGUMENT); count and class names come
  // later. ALREADY_EXISTS naming `path` when anything is there already; an errno's code
  // naming the file when the temporary file cannot be made.
  static absl::StatusOr<std::unique_ptr<PackedImagesWriter>> Create(const std::string& path,
                                                                    const PackedImagesInfo& layout);
  // Removes the temporary file unless Finish published it.
  ~PackedImagesWriter();
  PackedImagesWriter(const PackedImagesWriter&) = delete;
  PackedImagesWriter& operator=(const PackedImagesWriter&) = delete;

  // Appends one record: channels * size * size bytes (CHW), its label (-1 unlabelled, or
  // a class index Finish will name) and the relative path it came from.
  absl::Status Append(std::span<const uint8_t> record, int label, absl::string_view source);

  // Writes the rest and publishes the file at its path (see above). `class_names` must
  // name every label appended (and be empty when all were -1); at least one record.
  // After a failure the temporary file is gone.
  absl::Status Finish(const std::vector<std::string>& class_names);

  // Removes the temporary file now; nothing is published.
  void Abandon();

  int64_t count() const { return count_; }
  // The bytes the finished file will have so far (records and header).
  int64_t record_bytes_written() const;
  const std::string& temporary_path() const { return tmp_path_; }
  // Whether (device, inode) is the temporary file (a folder being packed may hold it).
  bool IsTemporaryFile(dev_t device, ino_t inode) const;

 private:
  class Output;
  PackedImagesWriter() = default;
  absl::Status FinishFile(const std::vector<std::string>& class_names);

  std::string path_;
  std::string tmp_path_;
  PackedImagesInfo layout_;
  int64_t record_bytes_ = 0;
  int64_t record_stride_ = 0;
  std::unique_ptr<Output> file_;     // the temporary file
  std::unique_ptr<Output> index_;    // scratch: index entries
  std::unique_ptr<Output> sources_;  // scratch: the sources' strings
  dev_t device_ = 0;
  ino_t inode_ = 0;
  int64_t count_ = 0;
  int max_label_ = -1;
  bool any_unlabelled_ = false;
  bool published_ = false;
};

}  // namespace gantry
