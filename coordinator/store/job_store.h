// The coordinator's durable state: jobs, their history (state changes, epoch rows,
// straggler events) and the registered worker groups.
//
// JobStore is the interface the Coordinator writes through, so a test can put a store
// in front that fails any write (tests/coordinator/faulty_job_store.h) and check that
// nothing drifts. The one production implementation is SQLite (sqlite_job_store.h),
// opened by JobStore::Open.
//
// Contract for every implementation: each write either happens or returns an error
// naming the store; the writes of one coordinator operation go inside one
// Transaction(), which commits all of them or, when the body or the commit fails,
// none (the store is left as before the transaction). A record that cannot be read
// (stored_records.h) never fails a listing: it is returned as an UnreadableRecord beside
// the readable ones. Not thread-safe: the Coordinator serialises access.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/job.pb.h"

namespace gantry {

// How hard a transaction's commit is pushed to disk. kSynced: it survives a crash of
// the machine (fsync). kRelaxed: it survives a crash of the process but a power loss
// may undo it; for writes a later report repeats anyway (a progress-only report).
enum class Durability { kSynced, kRelaxed };

// A stored record that cannot be read (stored_records.h), or a job set aside earlier
// (QuarantineJob): its row, and why.
struct UnreadableRecord {
  int64_t number = 0;
  std::string id;      // the row's id column, as stored
  std::string reason;
};

class JobStore {
 public:
  // Opens (creating when missing) the SQLite store at `path`.
  static absl::StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path);

  virtual ~JobStore() = default;

  // Runs `body`; commits its writes when it returns OK, else discards them. An error
  // from the body or from the commit is returned and the store is as it was before.
  virtual absl::Status Transaction(const std::function<absl::Status()>& body, Durability durability) = 0;

  // Jobs, numbered in submission order from 1.
  virtual absl::StatusOr<int64_t> NextJobNumber() = 0;
  virtual absl::Status InsertJob(int64_t number, const v1::Job& job) = 0;
  // Compare-and-set: writes `job` only when its stored row is still in `expected_state`
  // (the state the caller read), in one SQL statement. NOT_FOUND when not inserted;
  // ABORTED naming the job and the state it is in when another process changed it
  // meanwhile (two coordinators on one database, which the lock file refuses, or a
  // cancel racing a claim): nothing is written, so a job is never handed out twice and
  // a cancelled job never claimed.
  virtual absl::Status UpdateJob(const v1::Job& job, v1::JobState expected_state) = 0;
  // NOT_FOUND for no such job; DATA_LOSS naming it for one whose record is unreadable
  // or set aside.
  virtual absl::StatusOr<v1::Job> GetJob(const std::string& id) = 0;
  struct JobPage {
    std::vector<v1::Job> jobs;
    std::vector<UnreadableRecord> unreadable;  // rows of the page that are not in `jobs`
    int64_t last_number = 0;  // of the last row returned
    bool more = false;        // further jobs follow
  };
  // Jobs numbered above `after_number`, in order, of `state` (UNSPECIFIED: any); at most
  // `limit` rows, readable or not.
  virtual absl::StatusOr<JobPage> ListJobs(v1::JobState state, int64_t after_number, int limit) = 0;
  struct JobRows {
    std::vector<v1::Job> jobs;
    std::vector<UnreadableRecord> unreadable;  // not yet set aside
  };
  // Jobs in any of `states` (by the state column), in submission order; jobs set aside
  // are left out.
  virtual absl::StatusOr<JobRows> JobsInStates(const std::vector<v1::JobState>& states) = 0;
  // Sets the job of row `number` aside: it stays in the store as it is (nothing is
  // deleted), ListJobs reports it with `reason`, GetJob answers DATA_LOSS, and
  // JobsInStates and CountJobsByState leave it out.
  virtual absl::Status QuarantineJob(int64_t number, const std::string& reason) = 0;
  // How many jobs are in each state (states with none are absent; jobs set aside and
  // rows whose state column is not a JobState are not counted).
  virtual absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState() = 0;

  // History. AppendEvent numbers the job's entries 1, 2, ... and returns the entry.
  // The readers skip an unreadable entry, row or event (logging it with its job and place).
  virtual absl::StatusOr<v1::JobEvent> AppendEvent(v1::JobEvent event) = 0;
  virtual absl::StatusOr<std::vector<v1::JobEvent>> EventsAfter(const std::string& job_id, int64_t after_sequence,
                                                                int limit) = 0;
  // One row per (batch size, epoch): true when the row is new or differs from the stored
  // one (which it replaces, keeping its place in the order).
  virtual absl::StatusOr<bool> PutEpoch(const std::string& job_id, const v1::EpochMetrics& row) = 0;
  virtual absl::StatusOr<std::vector<v1::EpochMetrics>> Epochs(const std::string& job_id) = 0;
  // One event per (batch size, epoch, step, rank): true when it was not stored yet.
  virtual absl::StatusOr<bool> AddStraggler(const std::string& job_id, const v1::StragglerEvent& event) = 0;
  virtual absl::StatusOr<std::vector<v1::StragglerEvent>> Stragglers(const std::string& job_id) = 0;

  // Worker groups, numbered in registration order from 1.
  virtual absl::StatusOr<int64_t> NextGroupNumber() = 0;
  virtual absl::Status PutGroup(int64_t number, const v1::Group& group) = 0;
  struct StoredGroup {
    int64_t number = 0;
    v1::Group group;
  };
  struct GroupRows {
    std::vector<StoredGroup> groups;  // in registration order
    std::vector<UnreadableRecord> unreadable;
  };
  virtual absl::StatusOr<GroupRows> Groups() = 0;
};

}  // namespace gantry
