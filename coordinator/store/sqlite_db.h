// A small RAII layer over SQLite: one connection, prepared statements, transactions.
// Every failure is an absl::Status naming the database file and SQLite's message.
// Not thread-safe: the owner serialises access.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gantry {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3_stmt* stmt, std::string context) : stmt_(stmt), context_(std::move(context)) {}
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  ~SqliteStatement();

  // Parameters are 1-based, as in SQL's ?1, ?2.
  SqliteStatement& Bind(int index, int64_t value);
  SqliteStatement& Bind(int index, const std::string& text);
  SqliteStatement& BindBlob(int index, const std::string& bytes);

  // Advances: true with a row to read, false when done.
  absl::StatusOr<bool> Step();
  // Steps to completion, for statements without results.
  absl::Status Run();

  // Columns are 0-based.
  bool ColumnIsNull(int column) const;
  size_t ColumnBytes(int column) const;  // of a text or blob column
  int64_t ColumnInt64(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;

 private:
  sqlite3_stmt* stmt_;
  std::string context_;  // the database file, for messages
};

class SqliteDb {
 public:
  // Opens (creating when missing) a database file read-write, in WAL mode with full
  // fsync on commit, with a bounded wait on a locked database. Refused with
  // FAILED_PRECONDITION naming --db and the file, before SQLite writes anything:
  //  - a path that is not a regular file (a folder, a device, a FIFO), or beside which
  //    SQLite's own files (PATH-wal, PATH-shm, PATH-journal) are not regular files;
  //  - a file that is not empty and not a SQLite database (not the coordinator's to touch);
  //  - a damaged database (PRAGMA quick_check finds a fault): the message says how to
  //    recover what can be read into a new file;
  //  - one that cannot be read, or opened for writing.
  // The check reads every page: seconds for a database of gigabytes.
  static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();

  absl::Status Exec(const std::string& sql);
  absl::StatusOr<SqliteStatement> Prepare(const std::string& sql);
  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT; rolls back when the body or the
  // COMMIT fails, so a failed transaction never leaves writes behind. `synced` false
  // commits with synchronous=NORMAL (WAL: no fsync; survives a process crash, not a
  // power loss; a later synced commit makes it durable too).
  absl::Status Transaction(const std::function<absl::Status()>& body, bool synced = true);

  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  absl::Status Error(const std::string& what) const;
  // OK when PRAGMA quick_check finds nothing wrong; else why the file cannot be served.
  absl::Status CheckIntegrity();

  sqlite3* db_;
  std::string path_;
};

}  // namespace gantry
