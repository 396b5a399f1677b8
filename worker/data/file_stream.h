// The bytes of one regular file, read in the amounts the caller asks for and gunzipped on
// the fly when the file starts with gzip's magic (1f 8b; concatenated members are one
// stream, as gunzip treats them).
//
// Nothing is inflated ahead of what the caller asks for (the compressed input is read in
// bounded chunks), so a reader that takes a header, then exactly the bytes the header
// promises, then one more to see that nothing follows, never holds or inflates more than
// that, whatever the file holds: a gzip bomb costs what its header promises. Only a
// regular file is opened, and without waiting: a FIFO, a device (a link to /dev/zero) or
// a socket is refused by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

class FileStream {
 public:
  // Opens `path`. Errors name it: missing or unreadable (the errno's code), a folder or
  // not a regular file (INVALID_ARGUMENT).
  static absl::StatusOr<std::unique_ptr<FileStream>> Open(const std::string& path);
  ~FileStream();
  FileStream(const FileStream&) = delete;
  FileStream& operator=(const FileStream&) = delete;

  const std::string& path() const { return path_; }
  bool gzipped() const { return gzipped_; }
  // The size of the file on disk (compressed, for a gzip file).
  int64_t file_bytes() const { return file_bytes_; }

  // Reads up to `n` bytes of the (inflated) data into `out`; fewer only at the end of
  // the data. A gzip stream that is cut short, corrupt (a bad checksum included, seen
  // when its end is reached) or followed by bytes that are not another member is
  // DATA_LOSS naming the file and the fault; a failed read is the errno's code.
  absl::StatusOr<size_t> Read(uint8_t* out, size_t n);

 private:
  struct Inflater;
  FileStream(std::string path, int fd, int64_t file_bytes);
  absl::StatusOr<size_t> ReadRaw(uint8_t* out, size_t n);
  absl::StatusOr<size_t> ReadGzip(uint8_t* out, size_t n);
  // Reads more compressed input; false at the end of the file.
  absl::StatusOr<bool> Refill();

  std::string path_;
  int fd_ = -1;
  int64_t file_bytes_ = 0;
  bool gzipped_ = false;
  std::unique_ptr<Inflater> inflater_;  // gzip files only
};

}  // namespace gantry
