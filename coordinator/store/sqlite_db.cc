#include "coordinator/store/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace gantry {
namespace {
constexpr int kBusyTimeoutMs = 5000;
constexpr int kIntegrityLinesShown = 3;
constexpr char kSqliteMagic[] = "SQLite format 3";  // and a NUL: the first 16 bytes of every database

absl::Status Refused(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("--db ", path, ": ", why));
}

// What the database file and SQLite's files beside it must be before SQLite opens them.
absl::Status CheckDatabaseFiles(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Refused(path, "is a folder; give the path of a database file in it");
    if (!S_ISREG(st.st_mode)) {
      return Refused(path, "is not a regular file (a device, FIFO or socket); give the path of a database file");
    }
    char head[sizeof(kSqliteMagic)] = {};
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return Refused(path, absl::StrCat("cannot be read (", std::strerror(errno), ")"));
    const size_t got = std::fread(head, 1, sizeof(head), f);
    std::fclose(f);
    if (got > 0 && (got < sizeof(head) || std::memcmp(head, kSqliteMagic, sizeof(head)) != 0)) {
      return Refused(path, "is not a SQLite database, so not a gantry job database; it was left as it is "
                           "(is --db the right path? a new database needs a path that does not exist yet)");
    }
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string beside = path + suffix;
    if (lstat(beside.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return Refused(path, absl::StrCat(beside, " (SQLite's own file beside the database) is not a regular file "
                                                "(a folder, link, device or FIFO); move it away"));
    }
  }
  return absl::OkStatus();
}

bool IsDamage(int code) { return (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB; }

std::string DamagedMessage(const std::string& path, const std::string& finding) {
  return absl::StrCat(
      "the database is damaged (", finding, "); the coordinator will not serve from it. Keep a copy of ", path,
      " (with ", path, "-wal if there is one), recover what SQLite can read into a new file with `sqlite3 ", path,
      " .recover | sqlite3 NEW.db` and start with --db NEW.db (docs/coordinator.md, \"A damaged job database\")");
}
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

bool SqliteStatement::ColumnIsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

size_t SqliteStatement::ColumnBytes(int column) const {
  return static_cast<size_t>(sqlite3_column_bytes(stmt_, column));
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
  RETURN_IF_ERROR(CheckDatabaseFiles(path));
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
  RETURN_IF_ERROR(db->CheckIntegrity());
  // WAL: readers never block the writer; FULL: a committed transaction survives a crash.
  if (absl::Status s = db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
      !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("--db ", path, ": cannot be written: ", s.message()));
  }
  return db;
}

absl::Status SqliteDb::CheckIntegrity() {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA quick_check", -1, &raw, nullptr);
  SqliteStatement stmt(raw, path_);  // finalizes
  std::vector<std::string> findings;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    rc = sqlite3_step(raw);
    if (rc != SQLITE_ROW) break;
    findings.push_back(stmt.ColumnText(0));
  }
  if (rc != SQLITE_DONE) {
    const int code = sqlite3_extended_errcode(db_);
    if (IsDamage(code)) return Refused(path_, DamagedMessage(path_, sqlite3_errmsg(db_)));
    return Refused(path_, absl::StrCat("cannot be read (", sqlite3_errmsg(db_),
                                       "); check the disk, the permissions, and that the folder is writable "
                                       "(SQLite keeps PATH-wal and PATH-shm beside the database)"));
  }
  if (findings.size() == 1 && findings[0] == "ok") return absl::OkStatus();
  if (findings.size() > kIntegrityLinesShown) {
    findings.resize(kIntegrityLinesShown);
    findings.push_back("...");
  }
  return Refused(path_, DamagedMessage(path_, absl::StrCat("quick_check: ", absl::StrJoin(findings, "; "))));
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
