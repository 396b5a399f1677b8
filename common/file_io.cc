#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/machine_memory.h"
#include "common/status_macros.h"
#include "common/write_fence.h"

namespace gantry {

absl::Status WriteAll(int fd, const std::string& path, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return FileError(path, "write failed", errno);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

namespace {

// Makes a rename durable; best effort, since some filesystems refuse to fsync a folder.
void SyncParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// FileError for reading: a permission error means the file cannot be read, whatever
// FileError's hint for writers says.
absl::Status ReadError(const std::string& path, const std::string& what, int error_number) {
  // The user's path is wrong, not the machine: refused input (INVALID_ARGUMENT, exit 2).
  if (error_number == ELOOP) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, ": a loop of symbolic links (or more links than ",
                                                   "the system follows); give the path of a file"));
  }
  if (error_number != EACCES && error_number != EPERM) return FileError(path, what, error_number);
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(path, ": ", what, ": ", std::strerror(error_number),
                                   " (not readable: check its permissions and those of its folders)"));
}

}  // namespace

absl::Status FileError(const std::string& path, const std::string& what, int error_number) {
  std::string hint;
  if (error_number == ENOSPC || error_number == EDQUOT) hint = " (the disk is full: free space or write elsewhere)";
  if (error_number == EACCES || error_number == EROFS) hint = " (not writable: choose another location)";
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(path, ": ", what, ": ", std::strerror(error_number), hint));
}

namespace {

// Moves `tmp` to `path`, replacing what is there.
absl::Status PublishReplacing(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return FileError(path, "rename failed", errno);
  SyncParentDir(path);
  return absl::OkStatus();
}

// PublishWithoutReplacing's refusal: ALREADY_EXISTS when something is at `path`.
absl::Status PublishError(const std::string& tmp, const std::string& path, int error_number) {
  if (error_number == EEXIST) return absl::AlreadyExistsError(absl::StrCat(path, ": exists; left as it is"));
  return FileError(path, absl::StrCat("cannot move ", tmp, " there"), error_number);
}

absl::Status WriteAndPublish(const std::string& path, std::initializer_list<ByteSpan> pieces, bool replace) {
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(path));
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(tmp, "cannot create", errno);
  absl::Status status;
  for (const ByteSpan& piece : pieces) {
    if (status.ok()) status = WriteAll(fd, tmp, piece.data, piece.size);
  }
  if (status.ok() && ::fsync(fd) != 0) status = FileError(tmp, "fsync failed", errno);
  if (::close(fd) != 0 && status.ok()) status = FileError(tmp, "close failed", errno);
  if (status.ok()) status = replace ? PublishReplacing(tmp, path) : PublishWithoutReplacing(tmp, path);
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

}  // namespace

absl::Status PublishWithoutReplacing(const std::string& tmp, const std::string& path) {
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(path));
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno != EINVAL && errno != ENOSYS) return PublishError(tmp, path, errno);
    struct stat st {};
    if (::lstat(tmp.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      // A folder cannot be linked: rename(2) replaces at most an empty folder there.
      if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        return PublishError(tmp, path, errno == ENOTEMPTY || errno == ENOTDIR ? EEXIST : errno);
      }
    } else {
      // A filesystem without RENAME_NOREPLACE: a hard link is just as exclusive.
      if (::link(tmp.c_str(), path.c_str()) != 0) return PublishError(tmp, path, errno);
      ::unlink(tmp.c_str());
    }
  }
  SyncParentDir(path);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::initializer_list<ByteSpan> pieces) {
  return WriteAndPublish(path, pieces, /*replace=*/true);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, {ByteSpan{text.data(), text.size()}});
}

absl::Status CreateFileAtomically(const std::string& path, const std::string& text) {
  return WriteAndPublish(path, {ByteSpan{text.data(), text.size()}}, /*replace=*/false);
}

absl::Status CreateFileAtomically(const std::string& path, std::initializer_list<ByteSpan> pieces) {
  return WriteAndPublish(path, pieces, /*replace=*/false);
}

absl::Status CheckRoomToWrite(const std::string& path, size_t bytes) {
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(path));
  const std::string probe = absl::StrCat(path, ".space-check.", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(probe, "cannot create", errno);
  // posix_fallocate returns the error number instead of setting errno.
  const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  ::close(fd);
  ::unlink(probe.c_str());
  if (error != 0) return FileError(probe, absl::StrCat("cannot reserve ", bytes, " bytes"), error);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ReadError(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return ReadError(path, "cannot stat", error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(
        path, S_ISDIR(st.st_mode) ? ": is a directory, expected a file" : ": is not a regular file (a FIFO, device or "
                                                                          "socket?); give the path of a file"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", st.st_size, " bytes, more than the ", max_bytes, " this file may hold"));
  }
  // A file read whole must fit in memory: a sparse or mistaken huge file is refused by
  // name here, not with bad_alloc.
  if (absl::Status fits = CheckFitsMemory({.what = absl::StrCat(path, " (", st.st_size, " bytes, read whole)"),
                                           .bytes = static_cast<double>(st.st_size),
                                           .fix = "give the right file, or free memory"});
      !fits.ok()) {
    ::close(fd);
    return fits;
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  uint8_t chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return ReadError(path, "read failed", error);
    }
    if (n == 0) break;
    // A file that grows while it is read is still bounded.
    if (bytes.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": more than the ", max_bytes, " bytes this file may hold"));
    }
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return bytes;
}

absl::StatusOr<int> OpenForAppend(const std::string& path) {
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(path));
  // O_NONBLOCK: a FIFO would otherwise wait for a reader; O_NOFOLLOW: a link is refused.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == ELOOP) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": is a symbolic link; it is appended to only as a file of its own: move the link away"));
  }
  if (fd < 0) return FileError(path, "cannot open for append", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": is not a regular file (a FIFO, device or socket?); move it away"));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

absl::Status AppendAndSync(const std::string& path, const std::string& text) {
  // Held across the append, not only its open.
  ASSIGN_OR_RETURN(const FenceHold fence, HoldFenceFor(path));
  ASSIGN_OR_RETURN(const int fd, OpenForAppend(path));
  absl::Status status = WriteAll(fd, path, text.data(), text.size());
  if (status.ok() && ::fsync(fd) != 0) status = FileError(path, "fsync failed", errno);
  if (::close(fd) != 0 && status.ok()) status = FileError(path, "close failed", errno);
  return status;
}

}  // namespace gantry
