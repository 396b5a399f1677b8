#include "coordinator/store/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

// The lock file holds a few short lines; more than this is not ours to print.
constexpr size_t kMaxHolderBytes = 512;

std::string HolderText(int fd) {
  char buffer[kMaxHolderBytes];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
  if (n <= 0) return "";
  std::string text(buffer, static_cast<size_t>(n));
  text = std::string(absl::StripAsciiWhitespace(text));
  return EscapeForTerminal(absl::StrReplaceAll(text, {{"\n", ", "}}));
}

// What the holder wrote; it writes right after locking, so an empty file is read again
// for up to a second before it is reported as unknown.
std::string Holder(int fd) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (std::string text = HolderText(fd); !text.empty()) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return "pid unknown: it wrote nothing into the lock file";
}

void WriteHolder(int fd, const std::string& address) {
  const std::string text = absl::StrCat("pid ", ::getpid(), "\naddress ", address, "\n");
  if (::ftruncate(fd, 0) != 0) return;
  if (::pwrite(fd, text.data(), text.size(), 0) < 0) return;
  ::fsync(fd);
}

}  // namespace

std::string DatabaseLock::LockPath(const std::string& db_path) {
  // The database's own name with every symbolic link resolved (of the folders, and of the
  // file when it exists), so two spellings of one database (a link to it, "./", "..")
  // share one lock file.
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(db_path, ec);
  return (ec || canonical.empty() ? db_path : canonical.string()) + ".lock";
}

absl::StatusOr<DatabaseLock> DatabaseLock::Acquire(const std::string& db_path, const std::string& address) {
  const std::string path = LockPath(db_path);
  const std::string shown = EscapeForTerminal(path);
  // O_NOFOLLOW: a symbolic link planted there would make us create or truncate its target.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    return absl::FailedPreconditionError(
        absl::StrCat("--db ", EscapeForTerminal(db_path), ": cannot open its lock file ", shown, ": ",
                     std::strerror(error),
                     error == ELOOP ? " (a symbolic link; remove it)" : "; check that its folder is writable"));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat("--db ", EscapeForTerminal(db_path), ": its lock file ", shown,
                                                      " is not a regular file; remove it"));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error != EWOULDBLOCK) {
      ::close(fd);
      return absl::FailedPreconditionError(absl::StrCat("--db ", EscapeForTerminal(db_path), ": cannot lock ", shown,
                                                        ": ", std::strerror(error)));
    }
    const std::string holder = Holder(fd);
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("--db ", EscapeForTerminal(db_path), " is in use by another gantry-coordinator (", holder,
                     "; lock file ", shown, "): one process owns a database; stop that one first, or give another "
                     "--db"));
  }
  WriteHolder(fd, address);
  return DatabaseLock(fd, path);
}

DatabaseLock::DatabaseLock(DatabaseLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

DatabaseLock& DatabaseLock::operator=(DatabaseLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

void DatabaseLock::SetAddress(const std::string& address) {
  if (fd_ >= 0) WriteHolder(fd_, address);
}

}  // namespace gantry
