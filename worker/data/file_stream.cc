#include "worker/data/file_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

// Compressed input is read this much at a time: the only read-ahead the stream does.
constexpr size_t kInputChunk = size_t{1} << 16;
// zlib counts in uInt; output is offered in bounded pieces so every count is in range.
constexpr size_t kZlibChunk = size_t{1} << 30;

absl::Status CorruptGzip(const std::string& path, const std::string& why) {
  return absl::DataLossError(absl::StrCat(path, ": corrupt gzip stream (", why,
                                          "); fetch the file again or check it with `gzip -t`"));
}

}  // namespace

struct FileStream::Inflater {
  z_stream zs{};
  bool initialised = false;
  std::vector<uint8_t> in = std::vector<uint8_t>(kInputChunk);
  size_t in_pos = 0;       // next unconsumed byte of `in`
  size_t in_len = 0;       // bytes of `in` holding input
  int64_t read_bytes = 0;  // compressed bytes read from the file so far
  bool eof = false;        // the file has no more bytes to read
  bool member_ended = false;
  bool finished = false;  // the last member ended with the file

  ~Inflater() {
    if (initialised) inflateEnd(&zs);
  }
  size_t available() const { return in_len - in_pos; }
};

FileStream::FileStream(std::string path, int fd, int64_t file_bytes)
    : path_(std::move(path)), fd_(fd), file_bytes_(file_bytes) {}

FileStream::~FileStream() {
  inflater_.reset();
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<std::unique_ptr<FileStream>> FileStream::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it
  // is refused below once fstat says what it is.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return FileError(path, "cannot open", errno);
  std::unique_ptr<FileStream> stream(new FileStream(path, fd, 0));
  struct stat st {};
  if (::fstat(fd, &st) != 0) return FileError(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, expected a file"));
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": is not a regular file (a FIFO, device or socket, or a link to one); give the path of a file"));
  }
  stream->file_bytes_ = st.st_size;
  uint8_t magic[2] = {0, 0};
  ssize_t got = 0;
  do {
    got = ::pread(fd, magic, sizeof(magic), 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return FileError(path, "read failed", errno);
  stream->gzipped_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (stream->gzipped_) {
    stream->inflater_ = std::make_unique<Inflater>();
    if (inflateInit2(&stream->inflater_->zs, 15 + 16) != Z_OK) {
      return absl::InternalError(absl::StrCat(path, ": zlib inflateInit2 failed"));
    }
    stream->inflater_->initialised = true;
  }
  return stream;
}

absl::StatusOr<size_t> FileStream::Read(uint8_t* out, size_t n) {
  return gzipped_ ? ReadGzip(out, n) : ReadRaw(out, n);
}

absl::StatusOr<size_t> FileStream::ReadRaw(uint8_t* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, out + done, std::min(n - done, kZlibChunk));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return FileError(path_, "read failed", errno);
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

absl::StatusOr<bool> FileStream::Refill() {
  Inflater& z = *inflater_;
  // Keep what is unconsumed at the front, then fill the rest.
  std::memmove(z.in.data(), z.in.data() + z.in_pos, z.available());
  z.in_len = z.available();
  z.in_pos = 0;
  for (;;) {
    const ssize_t got = ::read(fd_, z.in.data() + z.in_len, z.in.size() - z.in_len);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return FileError(path_, "read failed", errno);
    z.in_len += static_cast<size_t>(got);
    z.read_bytes += got;
    z.eof = got == 0;
    return got > 0;
  }
}

absl::StatusOr<size_t> FileStream::ReadGzip(uint8_t* out, size_t n) {
  Inflater& z = *inflater_;
  size_t produced = 0;
  while (produced < n && !z.finished) {
    if (z.member_ended) {
      // What follows a member: the end of the file, another member, or garbage.
      if (z.available() < 2 && !z.eof) {
        RETURN_IF_ERROR(Refill().status());
        continue;
      }
      if (z.available() == 0) {
        z.finished = true;
        break;
      }
      if (z.available() >= 2 && z.in[z.in_pos] == 0x1f && z.in[z.in_pos + 1] == 0x8b) {
        inflateReset(&z.zs);
        z.member_ended = false;
        continue;
      }
      const int64_t unread = file_bytes_ - (z.read_bytes - static_cast<int64_t>(z.available()));
      return CorruptGzip(path_, absl::StrCat(std::max<int64_t>(unread, z.available()),
                                             " bytes of garbage after the end of the stream"));
    }
    if (z.available() == 0 && !z.eof) {
      RETURN_IF_ERROR(Refill().status());
      continue;
    }
    z.zs.next_in = z.in.data() + z.in_pos;
    z.zs.avail_in = static_cast<uInt>(z.available());
    z.zs.next_out = out + produced;
    z.zs.avail_out = static_cast<uInt>(std::min(n - produced, kZlibChunk));
    const uInt in_offered = z.zs.avail_in;
    const uInt out_offered = z.zs.avail_out;
    const int ret = inflate(&z.zs, Z_NO_FLUSH);
    z.in_pos += in_offered - z.zs.avail_in;
    produced += out_offered - z.zs.avail_out;

    if (ret == Z_STREAM_END) {
      z.member_ended = true;
      continue;
    }
    if (ret == Z_DATA_ERROR) return CorruptGzip(path_, z.zs.msg != nullptr ? z.zs.msg : "invalid deflate data");
    if (ret == Z_NEED_DICT) return CorruptGzip(path_, "asks for a preset dictionary");
    if (ret == Z_MEM_ERROR) return absl::ResourceExhaustedError(absl::StrCat(path_, ": out of memory inflating"));
    // Z_OK or Z_BUF_ERROR: input or output ran out. With no progress and the file at its
    // end, the stream stopped before its end marker.
    const bool progress = in_offered != z.zs.avail_in || out_offered != z.zs.avail_out;
    if (progress) continue;
    if (z.available() == 0 && z.eof) {
      return CorruptGzip(path_, absl::StrCat("truncated: the stream stops after ", file_bytes_,
                                             " bytes, before its end marker"));
    }
    if (z.available() > 0) return CorruptGzip(path_, "inflate made no progress");
  }
  return produced;
}

}  // namespace gantry
