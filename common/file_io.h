// Durable file writes shared by every part that saves results (run folders, .npy
// samples, checkpoints): a reader never sees a half-written file, and errors name the
// file and, for the common causes (disk full, read-only place), the fix.
// Every writer here (and CheckRoomToWrite's probe) first holds the fence of a fenced
// folder the path lies in (write_fence.h): a writer fenced out gets ABORTED and writes
// nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

// An error for a failed system call on `path`, with errno's text and a hint.
absl::Status FileError(const std::string& path, const std::string& what, int error_number);

// Writes all `n` bytes of `data` to `fd` (retrying short writes and EINTR); the error
// names `path`. Not fenced: the caller holds what it must.
absl::Status WriteAll(int fd, const std::string& path, const void* data, size_t n);

// One contiguous piece of a file's contents.
struct ByteSpan {
  const void* data;
  size_t size;
};

// Writes the pieces, in order, to a unique temporary file next to `path`, fsyncs it,
// renames it over `path` and fsyncs the folder (best effort). On failure the temporary
// file is removed and `path` is left as it was.
absl::Status WriteFileAtomically(const std::string& path, std::initializer_list<ByteSpan> pieces);
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

// As WriteFileAtomically, but the last step never replaces anything: when a file (or
// anything else) is at `path` by then, ALREADY_EXISTS naming it, and it is left alone.
absl::Status CreateFileAtomically(const std::string& path, const std::string& text);
absl::Status CreateFileAtomically(const std::string& path, std::initializer_list<ByteSpan> pieces);

// Moves the finished file or folder `tmp` (written and fsynced by the caller, in the same folder as
// `path`) to `path` without ever replacing anything there: renameat2(RENAME_NOREPLACE),
// or on a filesystem without it a hard link then unlink of `tmp`, which is just as
// exclusive (a folder `tmp`, which cannot be linked, then moves with rename(2), which
// replaces at most an empty folder). Then fsyncs the folder (best effort). ALREADY_EXISTS naming `path` when
// anything (a file, a folder, a link, even a dangling one) is there by then, which is
// left alone; another failure names `path` and errno. On failure `tmp` stays where it
// is, for the caller to remove.
absl::Status PublishWithoutReplacing(const std::string& tmp, const std::string& path);

// Whether `bytes` more can be written in the folder of `path`: reserves them in a
// temporary file beside it (posix_fallocate, so a filesystem that is full is found even
// where a small write would still land in space a file already holds), then removes it.
// The error names the temporary file, with FileError's hint for a full disk.
absl::Status CheckRoomToWrite(const std::string& path, size_t bytes);

// The whole contents of the regular file `path`, at most `max_bytes` of them. Errors name
// the path: missing, unreadable ("not readable" for a permission error), a folder, not
// a regular file (a FIFO or device is refused without waiting on it), or larger than
// `max_bytes` or than the memory this machine has available (INVALID_ARGUMENT; checked
// on the size before reading, and again while reading).
absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, size_t max_bytes = SIZE_MAX);

// A descriptor open for appending to the regular file `path` (created when missing; the
// caller closes it). FAILED_PRECONDITION naming the path for a symbolic link (appending
// would write into whatever it points at), a folder, a FIFO (refused without waiting for
// a reader), a device or a socket.
absl::StatusOr<int> OpenForAppend(const std::string& path);

// Appends `text` to `path` (opened as OpenForAppend does) and fsyncs it.
absl::Status AppendAndSync(const std::string& path, const std::string& text);

}  // namespace gantry
