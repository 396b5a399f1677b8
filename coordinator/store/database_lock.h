// One process owns a job database: DatabaseLock is an exclusive lock on the file
// `--db PATH.lock` beside it, taken at start before the database is opened and held until
// the process exits. A second gantry-coordinator on the same --db is refused, naming the
// holder's pid and address, which the holder writes into the lock file.
//
// Why a flock(2) on a lock file, and not SQLite's own locking (PRAGMA locking_mode =
// EXCLUSIVE) or a lease row in the database: the kernel releases a flock when its
// process ends in any way (SIGKILL, a crash), so there is never a stale lease to expire
// or break by hand, and a restart right after a kill finds the database free; SQLite's
// exclusive mode would also shut out readers (sqlite3 on the file, backups) and its
// SQLITE_BUSY names no holder. The lock file holds only the holder's description; it is
// left in place when the holder exits (removing it would race with the next holder).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gantry {

class DatabaseLock {
 public:
  // Takes the lock on `db_path` + ".lock" (created when missing) without waiting and
  // writes "pid N" and `address` into it. FAILED_PRECONDITION naming --db, the lock file
  // and the holder (its pid and address, as the holder wrote them) when another process
  // holds it; naming the lock file when it cannot be created or is not a regular file (a
  // symbolic link, a folder, a FIFO).
  static absl::StatusOr<DatabaseLock> Acquire(const std::string& db_path, const std::string& address);

  // The lock file of the database at `db_path`: beside the file `db_path` names once every
  // symbolic link is resolved, so any spelling of the path finds the same lock (a hard
  // link to the database, another name for the same inode, does not: use one name).
  static std::string LockPath(const std::string& db_path);

  DatabaseLock(DatabaseLock&& other) noexcept;
  DatabaseLock& operator=(DatabaseLock&& other) noexcept;
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;
  ~DatabaseLock();  // releases the lock

  // Rewrites the holder's description with the address it serves on, once known (a
  // --listen port 0 is chosen at bind). Best effort: the lock holds either way.
  void SetAddress(const std::string& address);

 private:
  DatabaseLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::string path_;
};

}  // namespace gantry
