// The JobStore in one SQLite file.
//
// Records are stored as serialized protobuf messages next to the columns that are
// queried, so a field added to a message needs no migration. The schema is versioned
// with PRAGMA user_version; Open() creates a new file's tables, brings an older one up to
// date, refuses a file written by a newer schema, and writes once (RecordStart), so
// every problem that SqliteDb::Open and that write can find stops the start, naming the
// file. A record is checked against its row when read (stored_records.h). Not thread-safe.
#pragma once

#include <memory>
#include <string>

#include "coordinator/store/job_store.h"
#include "coordinator/store/sqlite_db.h"

namespace gantry {

class SqliteJobStore final : public JobStore {
 public:
  static constexpr int64_t kSchemaVersion = 2;

  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(const std::string& path);

  absl::Status Transaction(const std::function<absl::Status()>& body, Durability durability) override {
    return db_->Transaction(body, durability == Durability::kSynced);
  }
  absl::StatusOr<int64_t> NextJobNumber() override;
  absl::Status InsertJob(int64_t number, const v1::Job& job) override;
  absl::Status UpdateJob(const v1::Job& job, v1::JobState expected_state) override;
  absl::StatusOr<v1::Job> GetJob(const std::string& id) override;
  absl::StatusOr<JobPage> ListJobs(v1::JobState state, int64_t after_number, int limit) override;
  absl::StatusOr<JobRows> JobsInStates(const std::vector<v1::JobState>& states) override;
  absl::Status QuarantineJob(int64_t number, const std::string& reason) override;
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() override;
  absl::StatusOr<v1::JobEvent> AppendEvent(v1::JobEvent event) override;
  absl::StatusOr<std::vector<v1::JobEvent>> EventsAfter(const std::string& job_id, int64_t after_sequence,
                                                        int limit) override;
  absl::StatusOr<bool> PutEpoch(const std::string& job_id, const v1::EpochMetrics& row) override;
  absl::StatusOr<std::vector<v1::EpochMetrics>> Epochs(const std::string& job_id) override;
  absl::StatusOr<bool> AddStraggler(const std::string& job_id, const v1::StragglerEvent& event) override;
  absl::StatusOr<std::vector<v1::StragglerEvent>> Stragglers(const std::string& job_id) override;
  absl::StatusOr<int64_t> NextGroupNumber() override;
  absl::Status PutGroup(int64_t number, const v1::Group& group) override;
  absl::StatusOr<GroupRows> Groups() override;

  SqliteDb& db() { return *db_; }

 private:
  explicit SqliteJobStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status Migrate();
  // A synced write at every start, so a database that cannot be written (a read-only
  // place, a full disk, SQLite's files beside it not creatable) is found before serving.
  absl::Status RecordStart();

  std::unique_ptr<SqliteDb> db_;
};

}  // namespace gantry
