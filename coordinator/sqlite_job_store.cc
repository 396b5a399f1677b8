#include "coordinator/sqlite_job_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

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

template <typename Message>
absl::StatusOr<Message> Parse(const std::string& bytes, const std::string& what) {
  Message m;
  if (!m.ParseFromString(bytes)) return absl::DataLossError(absl::StrCat("job store: unreadable ", what, " record"));
  return m;
}

absl::StatusOr<int64_t> ScalarInt(SqliteDb& db, const std::string& sql) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(std::move(db)));
  RETURN_IF_ERROR(store->Migrate());
  return store;
}

absl::StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteJobStore> store, SqliteJobStore::Open(path));
  return std::unique_ptr<JobStore>(std::move(store));
}

absl::Status SqliteJobStore::Migrate() {
  return db_->Transaction([&]() -> absl::Status {
    ASSIGN_OR_RETURN(int64_t version, ScalarInt(*db_, "PRAGMA user_version"));
    if (version == kSchemaVersion) return absl::OkStatus();
    if (version > kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat("--db ", db_->path(), ": schema version ", version,
                                                        " was written by a newer gantry-coordinator (this one knows ",
                                                        kSchemaVersion, "); upgrade it"));
    }
    RETURN_IF_ERROR(db_->Exec(kSchemaV1));
    return db_->Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion));
  });
}

absl::StatusOr<int64_t> SqliteJobStore::NextJobNumber() {
  ASSIGN_OR_RETURN(int64_t last, ScalarInt(*db_, "SELECT COALESCE(MAX(number), 0) FROM jobs"));
  return last + 1;
}

absl::Status SqliteJobStore::InsertJob(int64_t number, const v1::Job& job) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("INSERT INTO jobs (number, id, state, job) VALUES (?1, ?2, ?3, ?4)"));
  return stmt.Bind(1, number).Bind(2, job.id()).Bind(3, int64_t{job.state()}).BindBlob(4, job.SerializeAsString()).Run();
}

absl::Status SqliteJobStore::UpdateJob(const v1::Job& job) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("UPDATE jobs SET state = ?2, job = ?3 WHERE id = ?1 RETURNING number"));
  stmt.Bind(1, job.id()).Bind(2, int64_t{job.state()}).BindBlob(3, job.SerializeAsString());
  ASSIGN_OR_RETURN(bool updated, stmt.Step());
  if (!updated) return absl::NotFoundError(absl::StrCat("job ", job.id(), " is not in the store"));
  return stmt.Run();
}

absl::StatusOr<v1::Job> SqliteJobStore::GetJob(const std::string& id) {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT job FROM jobs WHERE id = ?1"));
  stmt.Bind(1, id);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("no job '", id, "' (see `gantry jobs`)"));
  return Parse<v1::Job>(stmt.ColumnBlob(0), "job");
}

absl::StatusOr<JobStore::JobPage> SqliteJobStore::ListJobs(v1::JobState state, int64_t after_number, int limit) {
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare("SELECT number, job FROM jobs WHERE number > ?1 AND (?2 = 0 OR state = ?2) "
                                "ORDER BY number LIMIT ?3"));
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
    ASSIGN_OR_RETURN(v1::Job job, Parse<v1::Job>(stmt.ColumnBlob(1), "job"));
    page.jobs.push_back(std::move(job));
  }
  return page;
}

absl::StatusOr<std::map<v1::JobState, int64_t>> SqliteJobStore::CountJobsByState() {
  // Answered from the jobs_by_state index, without reading a job record.
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state"));
  std::map<v1::JobState, int64_t> counts;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return counts;
    const int64_t state = stmt.ColumnInt64(0);
    if (!v1::JobState_IsValid(static_cast<int>(state))) {
      return absl::DataLossError(absl::StrCat("job store: a job has state ", state, ", not a JobState"));
    }
    counts[static_cast<v1::JobState>(state)] = stmt.ColumnInt64(1);
  }
}

absl::StatusOr<std::vector<v1::Job>> SqliteJobStore::JobsInStates(const std::vector<v1::JobState>& states) {
  std::vector<int> numbers(states.begin(), states.end());
  ASSIGN_OR_RETURN(SqliteStatement stmt,
                   db_->Prepare(absl::StrCat("SELECT job FROM jobs WHERE state IN (", absl::StrJoin(numbers, ","),
                                             ") ORDER BY number")));
  std::vector<v1::Job> jobs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return jobs;
    ASSIGN_OR_RETURN(v1::Job job, Parse<v1::Job>(stmt.ColumnBlob(0), "job"));
    jobs.push_back(std::move(job));
  }
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
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT event FROM events WHERE job_id = ?1 AND sequence > ?2 "
                                                      "ORDER BY sequence LIMIT ?3"));
  stmt.Bind(1, job_id).Bind(2, after_sequence).Bind(3, int64_t{limit});
  std::vector<v1::JobEvent> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return events;
    ASSIGN_OR_RETURN(v1::JobEvent event, Parse<v1::JobEvent>(stmt.ColumnBlob(0), "event"));
    events.push_back(std::move(event));
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
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT metrics FROM epochs WHERE job_id = ?1 ORDER BY rowid"));
  stmt.Bind(1, job_id);
  std::vector<v1::EpochMetrics> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return rows;
    ASSIGN_OR_RETURN(v1::EpochMetrics m, Parse<v1::EpochMetrics>(stmt.ColumnBlob(0), "epoch"));
    rows.push_back(std::move(m));
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
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT event FROM stragglers WHERE job_id = ?1 ORDER BY rowid"));
  stmt.Bind(1, job_id);
  std::vector<v1::StragglerEvent> events;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return events;
    ASSIGN_OR_RETURN(v1::StragglerEvent e, Parse<v1::StragglerEvent>(stmt.ColumnBlob(0), "straggler"));
    events.push_back(std::move(e));
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

absl::StatusOr<std::vector<v1::Group>> SqliteJobStore::Groups() {
  ASSIGN_OR_RETURN(SqliteStatement stmt, db_->Prepare("SELECT grp FROM groups ORDER BY number"));
  std::vector<v1::Group> groups;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return groups;
    ASSIGN_OR_RETURN(v1::Group g, Parse<v1::Group>(stmt.ColumnBlob(0), "group"));
    groups.push_back(std::move(g));
  }
}

}  // namespace gantry
