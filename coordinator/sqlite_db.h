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
  // fsync on commit, with a bounded wait on a locked database. FAILED_PRECONDITION
  // naming the file when it cannot be opened or written.
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

  sqlite3* db_;
  std::string path_;
};

}  // namespace gantry
