#include "coordinator/sqlite_db.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gantry {
namespace {
constexpr int kBusyTimeoutMs = 5000;
}  // namespace

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : stmt_(other.stmt_), context_(std::move(other.context_)) {
  other.stmt_ = nullptr;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

SqliteStatement& SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int index, const std::string& text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindBlob(int index, const std::string& bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}

absl::StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return absl::InternalError(absl::StrCat(context_, ": ", sqlite3_errmsg(sqlite3_db_handle(stmt_)), " (in ",
                                          sqlite3_sql(stmt_), ")"));
}

absl::Status SqliteStatement::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return absl::OkStatus();
  }
}

int64_t SqliteStatement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string SqliteStatement::ColumnText(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text == nullptr ? std::string() : std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string SqliteStatement::ColumnBlob(int column) const {
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  return bytes == nullptr ? std::string() : std::string(bytes, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

absl::StatusOr<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  if (rc != SQLITE_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--db ", path, ": cannot open (", raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc),
        "); check that the folder exists and is writable"));
  }
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return absl::FailedPreconditionError(absl::StrCat("--db ", path, ": opened read-only; make the file writable"));
  }
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // WAL: readers never block the writer; FULL: a committed transaction survives a crash.
  if (absl::Status s = db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
      !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("--db ", path, ": cannot be written: ", s.message()));
  }
  return db;
}

SqliteDb::~SqliteDb() {
  if (db_ != nullptr) sqlite3_close(db_);
}

absl::Status SqliteDb::Error(const std::string& what) const {
  return absl::InternalError(absl::StrCat(path_, ": ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status SqliteDb::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    return absl::InternalError(absl::StrCat(path_, ": ", text, " (in ", sql, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SqliteStatement> SqliteDb::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return Error(absl::StrCat("cannot prepare '", sql, "'"));
  }
  return SqliteStatement(stmt, path_);
}

absl::Status SqliteDb::Transaction(const std::function<absl::Status()>& body, bool synced) {
  if (!synced) {
    RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
    absl::Status status = Transaction(body, true);
    if (absl::Status restored = Exec("PRAGMA synchronous=FULL"); !restored.ok() && status.ok()) return restored;
    return status;
  }
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  absl::Status status = body();
  if (status.ok()) status = Exec("COMMIT");
  // A COMMIT that fails (SQLITE_BUSY, a deferred constraint, an I/O error) can leave the
  // transaction open: without the rollback, its writes would ride along with the next
  // transaction's COMMIT after the caller was told they failed.
  if (!status.ok() && sqlite3_get_autocommit(db_) == 0) {
    if (absl::Status rolled_back = Exec("ROLLBACK"); !rolled_back.ok()) {
      return absl::InternalError(absl::StrCat(status.message(), "; and the rollback failed: ", rolled_back.message()));
    }
  }
  return status;
}

}  // namespace gantry
