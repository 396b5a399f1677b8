#include "coordinator/store/sqlite_job_store.h"

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "coordinator/store/stored_records.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

constexpr char kSchemaV1[] = R"sql(
CREATE TABLE jobs (
  number INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  state INTEGER NOT NULL,
  job BLOB NOT NULL);
CREATE INDEX jobs_by_state ON jobs (state, number);
CREATE TABLE events (
  job_id TEXT NOT NULL REFERENCES jobs (id),
  sequence INTEGER NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (job_id, sequence));
CREATE TABLE epochs (
  job_id TEXT NOT NULL REFERENCES jobs (id),
  batch_size INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  metrics BLOB NOT NULL,
  UNIQUE (job_id, batch_size, epoch));
CREATE TABLE stragglers (
  job_id TEXT NOT NULL REFERENCES jobs (id),
  batch_size INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  step INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  event BLOB NOT NULL,
  UNIQUE (job_id, batch_size, epoch, step, rank));
CREATE TABLE groups (
  number INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  grp BLOB NOT NULL);
)sql";

// Version 2: a job can be set aside (QuarantineJob), and every start writes (RecordStart).
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE jobs ADD COLUMN quarantine TEXT;
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (key, value) VALUES ('starts', 0);
)sql";

// Schema step i takes a database from version i to i + 1.
constexpr const char* kSchemaSteps[] = {kSchemaV1, kSchemaV2};
static_assert(static_cast<int64_t>(std::size(kSchemaSteps)) == SqliteJobStore::kSchemaVersion);

constexpr char kJobColumns[] = "number, id, state, job, quarantine";

// The free space a start requires beside the database: room for the -wal file to grow
// by a few hundred pages. Less, and the coordinator is refused as on a full disk.
constexpr size_t kRoomToStart = size_t{1} << 20;

std::string TooLarge(const char* what, size_t bytes) {
  return absl::StrCat("the ", what, " record holds ", bytes, " bytes, more than the ", kMaxRecordBytes, " any may");
}

// The job of the current row of a `SELECT kJobColumns` statement; false with the row's
// UnreadableRecord when it is set aside or cannot be read.
bool ReadJob(const SqliteStatement& stmt, v1::Job& job, UnreadableRecord& unreadable) {
  unreadable = UnreadableRecord{stmt.ColumnInt64(0), stmt.ColumnText(1), ""};
  if (!stmt.ColumnIsNull(4)) {
    unreadable.reason = stmt.ColumnText(4);
    return false;
  }
  // A record too large for any job is not copied out of SQLite to find that out.
  if (stmt.ColumnBytes(3) > kMaxRecordBytes) {
    unreadable.reason = TooLarge("job", stmt.ColumnBytes(3));
    return false;
  }
  const JobRow row{unreadable.number, unreadable.id, stmt.ColumnInt64(2), stmt.ColumnBlob(3)};
  absl::StatusOr<v1::Job> decoded = DecodeJobRow(row);
  if (!decoded.ok()) {
    unreadable.reason = std::string(decoded.status().message());
    return false;
  }
  job = *std::move(decoded);
  return true;
}

// The message of a history row (an event, an epoch row, a straggler event): its column
// `column`, parsed, and `matches` its row's other columns. A row that is not is skipped
// and logged, naming the job and `what`: one damaged entry must not hide the others.
template <typename Message>
std::optional<Message> ReadHistoryRow(const SqliteDb& db, const SqliteStatement& stmt, int column,
                                      const std::string& job_id, const char* what,
                                      const std::function<bool(const Message&)>& matches) {
  Message message;
  const bool fits = stmt.ColumnBytes(column) <= kMaxRecordBytes;
  if (fits && message.ParseFromString(stmt.ColumnBlob(column)) && matches(message)) return message;
  spdlog::warn("--db {}: {} of {} is unreadable or disagrees with its row; skipped", db.path(), what,
               EscapeForTerminal(job_id));
  return std::nullopt;
}

absl::StatusOr<int64_t> ScalarInt(SqliteDb& db, const std::string& sql) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path) {
  auto unwritable = [&](const absl::Status& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("--db ", path, ": cannot be written (", why.message(),
                     "); check free space, the permissions, and that its folder is writable (SQLite keeps PATH-wal "
                     "and PATH-shm beside it)"));
  };
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) {
    // SQLite says "disk I/O error" where it cannot grow its -shm file: a full disk is
    // named as such.
    if (absl::Status room = CheckRoomToWrite(path, kRoomToStart); absl::IsResourceExhausted(room)) {
      return unwritable(room);
    }
    return db.status();
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(*std::move(db)));
  absl::Status ready = store->Migrate();
  if (ready.ok()) ready = store->RecordStart();
  // RecordStart's write of a few pages fits where a coordinator's work does not (200 KiB
  // left, say), so the room to grow is checked too: every later write would fail.
  if (ready.ok()) ready = CheckRoomToWrite(path, kRoomToStart);
  if (ready.ok()) return store;
  if (absl::IsFailedPrecondition(ready)) return ready;
  return unwritable(ready);
}

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteJobStore> store, SqliteJobStore::Open(path));
  return std::unique_ptr<JobStore>(std::move(store));
}

absl::Status SqliteJobStore::Migrate() {
  return db_->Transaction([&]() -> absl::Status {
    ASSIGN_OR_RETURN(int64_t version, ScalarInt(*db_, "PRAGMA user_version"));
    if (version == kSchemaVersion) return absl::OkStatus();
    if (version < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("--db ", db_->path(), ": schema version ", version, " is not one gantry-coordinator writes"));
    }
    if (version > kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat("--db ", db_->path(), ": schema version ", version,
                                                        " was written by a newer gantry-coordinator (this one knows ",
                                                        kSchemaVersion, "); upgrade it"));
    }
    for (int64_t step = version; step < kSchemaVersion; ++step) RETURN_IF_ERROR(db_->Exec(kSchemaSteps[step]));
    return db_->Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion));
  });
}

absl::Status SqliteJobStore::RecordStart() {
  return db_->Transaction([&] { return db_->Exec("UPDATE meta SET value = value + 1 WHERE key = 'starts'"); });
}

absl::StatusOr<int64_t> SqliteJobStore::NextJobNumber() {
  ASSIGN_OR_RETURN(int64_t last, ScalarInt(*db_, "SELECT COALESCE(MAX(number), 0) FROM jobs"));
  return last + 1;
}

absl::Status SqliteJobStore::InsertJob(int64_t number, const v1::Job& job) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("INSERT INTO jobs (number, id, state, job) VALUES (?1, ?2, ?3, ?4)"));
  return stmt.Bind(1, number).Bind(2, job.id()).Bind(3, int64_t{job.state()}).BindBlob(4, job.SerializeAsString()).Run();
}

absl::Status SqliteJobStore::UpdateJob(const v1::Job& job, v1::JobState expected_state) {
  // The state test is in the UPDATE itself: SQLite runs it under the write lock, so two
  // processes that both read a job as QUEUED cannot both claim it.
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("UPDATE jobs SET state = ?2, job = ?3 WHERE id = ?1 AND state = ?4 RETURNING number"));
  stmt.Bind(1, job.id()).Bind(2, int64_t{job.state()}).BindBlob(3, job.SerializeAsString()).Bind(4, int64_t{expected_state});
  ASSIGN_OR_RETURN(bool updated, stmt.Step());
  if (updated) return stmt.Run();
  ASSIGN_OR_RETURN(SqliteStatement now, db_->Prepare("SELECT state FROM jobs WHERE id = ?1"));
  now.Bind(1, job.id());
  ASSIGN_OR_RETURN(bool found, now.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("job ", job.id(), " is not in the store"));
  const int64_t state = now.ColumnInt64(0);
  const std::string name = v1::JobState_IsValid(static_cast<int>(state))
                               ? v1::JobState_Name(static_cast<v1::JobState>(state))
                               : absl::StrCat("state ", state);
  return absl::AbortedError(absl::StrCat("job ", job.id(), " changed in the store meanwhile (it is ", name,
                                         " there, not ", v1::JobState_Name(expected_state),
                                         "): another process wrote it; nothing was changed, ask again"));
}

absl::StatusOr<v1::Job> SqliteJobStore::GetJob(const std::string& id) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE id = ?1")));
  stmt.Bind(1, id);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("no job '", id, "' (see `gantry jobs`)"));
  v1::Job job;
  UnreadableRecord unreadable;
  if (ReadJob(stmt, job, unreadable)) return job;
  return absl::DataLossError(absl::StrCat(id, ": its stored record cannot be read (", unreadable.reason,
                                          "); it is set aside and the other jobs are served (docs/coordinator.md, "
                                          "\"A damaged job database\")"));
}

absl::StatusOr<JobStore::JobPage> SqliteJobStore::ListJobs(v1::JobState state, int64_t after_number, int limit) {
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare(absl::StrCat("SELECT ", kJobColumns,
                                             " FROM jobs WHERE number > ?1 AND (?2 = 0 OR state = ?2) "
                                             "ORDER BY number LIMIT ?3")));
  stmt.Bind(1, after_number).Bind(2, int64_t{state}).Bind(3, int64_t{limit} + 1);
  JobPage page;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.more = true;
      break;
    }
    page.last_number = stmt.ColumnInt64(0);
    v1::Job job;
    UnreadableRecord unreadable;
    if (ReadJob(stmt, job, unreadable)) {
      page.jobs.push_back(std::move(job));
    } else {
      page.unreadable.push_back(std::move(unreadable));
    }
  }
  return page;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> SqliteJobStore::CountJobsByState() {
  // Answered from the jobs_by_state index, without reading a job record.
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("SELECT state, COUNT(*) FROM jobs WHERE quarantine IS NULL GROUP BY state"));
  std::map<v1::JobState, int64_t> counts;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return counts;
    const int64_t state = stmt.ColumnInt64(0);
    // Such a row's record disagrees with it: ListJobs reports it as unreadable.
    if (state < 0 || state > INT32_MAX || !v1::JobState_IsValid(static_cast<int>(state))) continue;
    counts[static_cast<v1::JobState>(state)] = stmt.ColumnInt64(1);
  }
}

absl::StatusOr<JobStore::JobRows> SqliteJobStore::JobsInStates(const std::vector<v1::JobState>& states) {
  std::vector<int> numbers(states.begin(), states.end());
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare(absl::StrCat("SELECT ", kJobColumns, " FROM jobs WHERE state IN (",
                                             absl::StrJoin(numbers, ","), ") AND quarantine IS NULL ORDER BY number")));
  JobRows rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return rows;
    v1::Job job;
    UnreadableRecord unreadable;
    if (ReadJob(stmt, job, unreadable)) {
      rows.jobs.push_back(std::move(job));
    } else {
      rows.unreadable.push_back(std::move(unreadable));
    }
  }
}

absl::Status SqliteJobStore::QuarantineJob(int64_t number, const std::string& reason) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("UPDATE jobs SET quarantine = ?2 WHERE number = ?1"));
  return stmt.Bind(1, number).Bind(2, reason).Run();
}

absl::StatusOr<v1::JobEvent> SqliteJobStore::AppendEvent(v1::JobEvent event) {
  ASSIGN_OR_RETURN(SqliteStatement last, db_->Prepare("SELECT COALESCE(MAX(sequence), 0) FROM events WHERE job_id = ?1"));
  last.Bind(1, event.job_id());
  ASSIGN_OR_RETURN(bool row, last.Step());
  event.set_sequence((row ? last.ColumnInt64(0) : 0) + 1);
  ASSIGN_OR_RETURN(SqliteStatement insert,
                   db_->Prepare("INSERT INTO events (job_id, sequence, event) VALUES (?1, ?2, ?3)"));
  RETURN_IF_ERROR(insert.Bind(1, event.job_id()).Bind(2, event.sequence()).BindBlob(3, event.SerializeAsString()).Run());
  return event;
}

absl::StatusOr<std::vector<v1::JobEvent>> SqliteJobStore::EventsAfter(const std::string& job_id, int64_t after_sequence,
                                                                 int limit) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT sequence, event FROM events WHERE job_id = ?1 AND "
                                                      "sequence > ?2 ORDER BY sequence LIMIT ?3"));
  stmt.Bind(1, job_id).Bind(2, after_sequence).Bind(3, int64_t{limit});
  std::vector<v1::JobEvent> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return events;
    // A watcher resumes after the sequence of the last entry it got: one that is not its
    // row's would send it back in the history, again and again.
    const int64_t sequence = stmt.ColumnInt64(0);
    std::optional<v1::JobEvent> event = ReadHistoryRow<v1::JobEvent>(
        *db_, stmt, 1, job_id, "a history entry", [&](const v1::JobEvent& e) {
          return e.sequence() == sequence && e.job_id() == job_id && e.kind_case() != v1::JobEvent::KIND_NOT_SET;
        });
    if (event) events.push_back(*std::move(event));
  }
}

absl::StatusOr<bool> SqliteJobStore::PutEpoch(const std::string& job_id, const v1::EpochMetrics& row) {
  const std::string bytes = row.SerializeAsString();
  // Upsert that leaves an identical row alone, so a resent report changes nothing.
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("INSERT INTO epochs (job_id, batch_size, epoch, metrics) VALUES (?1, ?2, ?3, ?4) "
                                "ON CONFLICT (job_id, batch_size, epoch) DO UPDATE SET metrics = excluded.metrics "
                                "WHERE metrics != excluded.metrics"));
  RETURN_IF_ERROR(stmt.Bind(1, job_id).Bind(2, row.batch_size()).Bind(3, row.epoch()).BindBlob(4, bytes).Run());
  ASSIGN_OR_RETURN(int64_t changes, ScalarInt(*db_, "SELECT changes()"));
  return changes > 0;
}

absl::StatusOr<std::vector<v1::EpochMetrics>> SqliteJobStore::Epochs(const std::string& job_id) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT batch_size, epoch, metrics FROM epochs WHERE job_id = ?1 "
                                                      "ORDER BY rowid"));
  stmt.Bind(1, job_id);
  std::vector<v1::EpochMetrics> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return rows;
    const int64_t batch_size = stmt.ColumnInt64(0), epoch = stmt.ColumnInt64(1);
    std::optional<v1::EpochMetrics> m =
        ReadHistoryRow<v1::EpochMetrics>(*db_, stmt, 2, job_id, "an epoch row", [&](const v1::EpochMetrics& r) {
          return r.batch_size() == batch_size && r.epoch() == epoch;
        });
    if (m) rows.push_back(*std::move(m));
  }
}

absl::StatusOr<bool> SqliteJobStore::AddStraggler(const std::string& job_id, const v1::StragglerEvent& event) {
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("INSERT OR IGNORE INTO stragglers (job_id, batch_size, epoch, step, rank, event) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  RETURN_IF_ERROR(stmt.Bind(1, job_id)
                      .Bind(2, event.batch_size())
                      .Bind(3, event.epoch())
                      .Bind(4, event.step())
                      .Bind(5, int64_t{event.rank()})
                      .BindBlob(6, event.SerializeAsString())
                      .Run());
  ASSIGN_OR_RETURN(int64_t changes, ScalarInt(*db_, "SELECT changes()"));
  return changes > 0;
}

absl::StatusOr<std::vector<v1::StragglerEvent>> SqliteJobStore::Stragglers(const std::string& job_id) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT batch_size, epoch, step, rank, event FROM stragglers "
                                                      "WHERE job_id = ?1 ORDER BY rowid"));
  stmt.Bind(1, job_id);
  std::vector<v1::StragglerEvent> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return events;
    const int64_t batch_size = stmt.ColumnInt64(0), epoch = stmt.ColumnInt64(1), step = stmt.ColumnInt64(2),
                  rank = stmt.ColumnInt64(3);
    std::optional<v1::StragglerEvent> e = ReadHistoryRow<v1::StragglerEvent>(
        *db_, stmt, 4, job_id, "a straggler event", [&](const v1::StragglerEvent& s) {
          return s.batch_size() == batch_size && s.epoch() == epoch && s.step() == step && s.rank() == rank;
        });
    if (e) events.push_back(*std::move(e));
  }
}

absl::StatusOr<int64_t> SqliteJobStore::NextGroupNumber() {
  ASSIGN_OR_RETURN(int64_t last, ScalarInt(*db_, "SELECT COALESCE(MAX(number), 0) FROM groups"));
  return last + 1;
}

absl::Status SqliteJobStore::PutGroup(int64_t number, const v1::Group& group) {
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("INSERT INTO groups (number, id, grp) VALUES (?1, ?2, ?3) "
                                "ON CONFLICT (number) DO UPDATE SET grp = excluded.grp"));
  return stmt.Bind(1, number).Bind(2, group.id()).BindBlob(3, group.SerializeAsString()).Run();
}

absl::StatusOr<JobStore::GroupRows> SqliteJobStore::Groups() {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT number, id, grp FROM groups ORDER BY number"));
  GroupRows rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return rows;
    GroupRow stored{stmt.ColumnInt64(0), stmt.ColumnText(1), ""};
    if (stmt.ColumnBytes(2) > kMaxRecordBytes) {
      rows.unreadable.push_back({stored.number, stored.id, TooLarge("group", stmt.ColumnBytes(2))});
      continue;
    }
    stored.record = stmt.ColumnBlob(2);
    absl::StatusOr<v1::Group> group = DecodeGroupRow(stored);
    if (group.ok()) {
      rows.groups.push_back({stored.number, *std::move(group)});
    } else {
      rows.unreadable.push_back({stored.number, stored.id, std::string(group.status().message())});
    }
  }
}

}  // namespace gantry
