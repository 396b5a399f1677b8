// The coordinator's durable state in one SQLite file: jobs, their history (state
// changes, epoch rows, straggler events) and the registered worker groups.
//
// Records are stored as serialized protobuf messages next to the columns that are
// queried, so a field added to a message needs no migration. The schema is versioned
// with PRAGMA user_version; Open() creates a new file's tables and refuses a file
// written by a newer schema. Every write of one coordinator operation goes inside one
// Transaction(), so a crash leaves either all of it or none.
//
// Not thread-safe: the Coordinator serialises access.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/sqlite_db.h"
#include "gantry/v1/job.pb.h"

namespace gantry {

class JobStore {
 public:
  static constexpr int64_t kSchemaVersion = 1;

  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path);

  absl::Status Transaction(const std::function<absl::Status()>& body) { return db_->Transaction(body); }

  // Jobs, numbered in submission order from 1.
  absl::StatusOr<int64_t> NextJobNumber();
  absl::Status InsertJob(int64_t number, const v1::Job& job);
  absl::Status UpdateJob(const v1::Job& job);  // NOT_FOUND when not inserted
  absl::StatusOr<v1::Job> GetJob(const std::string& id);
  struct JobPage {
    std::vector<v1::Job> jobs;
    int64_t last_number = 0;  // of the last job returned
    bool more = false;        // further jobs follow
  };
  // Jobs numbered above `after_number`, in order, of `state` (UNSPECIFIED: any).
  absl::StatusOr<JobPage> ListJobs(v1::JobState state, int64_t after_number, int limit);
  // Jobs in any of `states`, in submission order.
  absl::StatusOr<std::vector<v1::Job>> JobsInStates(const std::vector<v1::JobState>& states);

  // History. AppendEvent numbers the job's entries 1, 2, ... and returns the entry.
  absl::StatusOr<v1::JobEvent> AppendEvent(v1::JobEvent event);
  absl::StatusOr<std::vector<v1::JobEvent>> EventsAfter(const std::string& job_id, int64_t after_sequence, int limit);
  // One row per (batch size, epoch): true when the row is new or differs from the stored
  // one (which it replaces, keeping its place in the order).
  absl::StatusOr<bool> PutEpoch(const std::string& job_id, const v1::EpochMetrics& row);
  absl::StatusOr<std::vector<v1::EpochMetrics>> Epochs(const std::string& job_id);
  // One event per (batch size, epoch, step, rank): true when it was not stored yet.
  absl::StatusOr<bool> AddStraggler(const std::string& job_id, const v1::StragglerEvent& event);
  absl::StatusOr<std::vector<v1::StragglerEvent>> Stragglers(const std::string& job_id);

  // Worker groups, numbered in registration order from 1.
  absl::StatusOr<int64_t> NextGroupNumber();
  absl::Status PutGroup(int64_t number, const v1::Group& group);
  absl::StatusOr<std::vector<v1::Group>> Groups();

 private:
  explicit JobStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status Migrate();

  std::unique_ptr<SqliteDb> db_;
};

}  // namespace gantry
