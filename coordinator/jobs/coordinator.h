// The coordinator's logic, free of gRPC: jobs are submitted, queued in the store,
// handed to worker groups, tracked through their reports, and taken back from groups
// that stop heartbeating. The gRPC service (grpc_service.h) only translates calls.
//
// Every method is thread-safe: one mutex guards the store and the in-memory state
// (leases, the groups, the queue and the active jobs' resolved specs). Every change is written
// to the store first and applied in memory only once its transaction has committed, so
// a failed write leaves memory and the database agreeing (and the call failing with
// the store's error). Waiting methods
// (AcquireJob, WaitForJobChange) wait on a condition of the mutex with a real-time bound and
// return early on Shutdown(); lease expiry uses the injected monotonic clock, and
// timestamps the injected wall clock (Unix time), so tests can drive both.
//
// A rollout job (SubmitJobRequest.rollout) goes through the same lifecycle: it is checked
// against its source job at submission (PrepareRollout), takes the source's spec and
// checkpoint reference, fits any group, and gets no shard plans.
//
// Job lifecycle: QUEUED -> RUNNING (acquired; attempts + 1) -> SUCCEEDED | FAILED |
// CANCELLED as the group reports. CancelJob: QUEUED -> CANCELLED, RUNNING -> CANCELLING
// (the group is told in its next reply) -> CANCELLED. A group whose lease runs out is
// marked LOST and its job goes back to QUEUED, or to FAILED once it has been handed out
// max_attempts times (CANCELLING jobs become CANCELLED).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "coordinator/jobs/epoch_planner.h"
#include "coordinator/store/job_store.h"
#include "coordinator/jobs/lease_table.h"
#include "coordinator/jobs/scheduler.h"
#include "coordinator/validation/spec_validator.h"
#include "gantry/v1/coordinator.pb.h"
#include "runspec/train_config.h"

namespace gantry {

struct CoordinatorOptions {
  double lease_seconds = 30;
  int default_max_attempts = 3;
  double max_acquire_wait_seconds = 30;  // AcquireJob's cap (also at most half a lease)
  int max_page_size = 1000;
  int max_report_items = 10000;          // epoch rows, events or timings per report
};

class Coordinator {
 public:
  // `wall` gives Unix time (nanoseconds); `monotonic` drives leases. Both must outlive
  // the Coordinator. Call Recover() before serving.
  Coordinator(std::unique_ptr<JobStore> store, const SpecValidator& validator, CoordinatorOptions options,
              const Clock& monotonic, const Clock& wall);

  // Loads the groups and active jobs of a reopened store. Every known group gets a
  // fresh lease (a coordinator restart is not the groups' fault); a queued job whose
  // spec no longer validates (a data root went away) fails with the reason. Damage
  // does not stop the start: an active job whose record cannot be read is set aside
  // (JobStore::QuarantineJob) and logged, a group whose record cannot be read is left
  // out and logged (its pool registers again), a running job whose group was left out
  // is queued again, and a group holding a job that was set aside is idle again.
  absl::Status Recover();

  // --- users ---
  // GetJob and ListJobs fill a queued job's waiting_reason from the groups registered now.
  absl::StatusOr<v1::Job> SubmitJob(const v1::SubmitJobRequest& request);
  absl::StatusOr<v1::Job> GetJob(const std::string& job_id);
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& request);
  absl::StatusOr<v1::Job> CancelJob(const std::string& job_id);
  absl::StatusOr<v1::JobReport> GetJobReport(const std::string& job_id);
  absl::StatusOr<std::vector<v1::JobEvent>> EventsAfter(const std::string& job_id, int64_t after_sequence, int limit);
  v1::ListGroupsResponse ListGroups();
  // How many jobs are in each state (for /metrics).
  absl::StatusOr<std::map<v1::JobState, int64_t>> CountJobsByState();

  // --- worker groups ---
  absl::StatusOr<v1::RegisterGroupResponse> RegisterGroup(const v1::RegisterGroupRequest& request);
  absl::StatusOr<v1::AcquireJobResponse> AcquireJob(const v1::AcquireJobRequest& request);
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& request);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request);

  // Takes jobs back from groups whose lease ran out; returns how many groups were lost.
  // The server calls it periodically; tests call it after advancing the clock.
  int ExpireLeases();

  // A counter that moves on every change of the job (state, progress, history);
  // WaitForJobChange returns when it differs from `seen`, after `timeout_seconds` (real
  // time), or on Shutdown(). Only the waiters of that job wake.
  uint64_t JobVersion(const std::string& job_id);
  void WaitForJobChange(const std::string& job_id, uint64_t seen, double timeout_seconds);

  // Wakes every waiter; later waits return at once.
  void Shutdown();
  bool shutting_down();

 private:
  struct GroupRecord {
    int64_t number = 0;
    v1::Group group;
    int64_t last_seen_nanos = 0;  // monotonic time of its latest call
  };

  absl::StatusOr<ResolvedSpec> ResolvedFor(const v1::Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills a new rollout job from its source job: NOT_FOUND when there is none;
  // FAILED_PRECONDITION when it has not SUCCEEDED or reported no checkpoint;
  // INVALID_ARGUMENT when it is a rollout itself or the rollout does not fit its model
  // (CheckRolloutFitsRun). Every error names rollout.source_job_id or the field.
  absl::Status PrepareRollout(const v1::RolloutSpec& rollout, v1::Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same for a generate job (CheckGenerateFitsRun); its name defaults to `job_id`,
  // the id the new job will have, so each job writes RUN/generate-<name>/ of its own.
  absl::Status PrepareGenerate(const v1::GenerateSpec& generate, v1::Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The finished training job `id` a rollout or generate (`field`: "rollout" or
  // "generate"; `verb` and `done`: what it does to the run, "roll out" and "rolled out")
  // reads, with its resolved settings.
  struct FinishedRun {
    v1::Job job;
    TrainConfig config;
  };
  absl::StatusOr<FinishedRun> FinishedSource(const std::string& id, const char* field, const char* verb,
                                             const char* done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<GroupRecord*> FindGroup(const std::string& group_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes a group's record inside the caller's transaction.
  absl::Status SaveGroup(const GroupRecord& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores `updated` in a transaction of its own, then (only once it is committed)
  // makes it the in-memory `record`: a failed write changes neither.
  absl::Status CommitGroup(GroupRecord& record, const GroupRecord& updated) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A lost group that calls again: idle.
  static GroupRecord Returned(const GroupRecord& lost);
  // Writes the job and appends a state-change entry to its history, in one transaction.
  absl::Status Transition(v1::Job& job, v1::JobState state, const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The history message of a new job: "submitted", and when groups are registered but
  // none (busy or idle) could ever run it, what group it waits for.
  std::string SubmittedMessage(const QueuedJob& job) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // When groups are registered (not lost) but none could ever run `job`: which there are
  // and what it waits for.
  std::optional<std::string> NoFitReason(const QueuedJob& job) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Job.waiting_reason of `job` now: empty unless it is QUEUED and no idle group fits it.
  std::string WaitingReason(const v1::Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Recover's parts.
  absl::Status RecoverGroups() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RecoverJobs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReleaseGroupsOfSetAsideJobs(const std::vector<v1::Job>& active) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets an unreadable job aside in a transaction of its own; logs it once committed.
  absl::Status Quarantine(const UnreadableRecord& bad) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::optional<v1::AcquireJobResponse>> TryAssign(GroupRecord& group)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StoreReport(v1::Job& job, const v1::ReportProgressRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the job's run on its group inside the caller's transaction; `finished` gets
  // the group's record to adopt once that transaction commits.
  absl::Status FinishOnGroup(v1::Job& job, const GroupRecord& group, const v1::ReportProgressRequest& request,
                             GroupRecord& finished) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status LoseGroup(GroupRecord& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A job its group no longer runs (lost, or released): CANCELLED if a cancel was asked,
  // FAILED after its last attempt, else QUEUED again (keeping its checkpoint). `why` goes
  // into the history. Part of the caller's transaction.
  absl::Status Requeue(v1::Job& job, const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckReportShape(const v1::ReportProgressRequest& request) const;
  void Renew(const std::string& group_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `body` as one store transaction; once it has committed, applies the changes of
  // the jobs it Touch()ed to memory (the queue, the caches, the job versions), wakes
  // their waiters and writes the log lines the body queued (Transition). On failure
  // memory stays as it was and nothing is logged: a line such as "job-3: cancelled"
  // is never written for a change the disk refused.
  absl::Status Commit(const std::function<absl::Status()>& body, Durability durability = Durability::kSynced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Notes, inside Commit's body, that `job` was written as it is now (with its resolved
  // spec when the caller has it, to seed the cache).
  void Touch(const v1::Job& job, const ResolvedSpec* resolved = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Apply(const v1::Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t JobVersionLocked(const std::string& job_id) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t NowUnixMs() const;
  double AcquireWaitCap() const;

  const SpecValidator& validator_;
  const CoordinatorOptions options_;
  const Clock& monotonic_;
  const Clock& wall_;
  const EpochPlanner planner_;

  // Waiters use absl::Condition (Mutex::AwaitWithDeadline), so a change wakes only the
  // waiters whose condition it makes true: a progress report wakes the watchers of its
  // job, not every long poll; a newly queued job wakes the long polls.
  absl::Mutex mu_;
  std::unique_ptr<JobStore> store_ ABSL_GUARDED_BY(mu_);
  LeaseTable leases_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, GroupRecord> groups_ ABSL_GUARDED_BY(mu_);
  // Active jobs' resolved specs, by job id (dropped when a job ends).
  std::map<std::string, ResolvedSpec> resolved_ ABSL_GUARDED_BY(mu_);
  // The queue in memory, by job number (submission order): what TryAssign chooses
  // from without reading every queued job from the store.
  std::map<int64_t, QueuedJob> queued_ ABSL_GUARDED_BY(mu_);
  uint64_t queue_version_ ABSL_GUARDED_BY(mu_) = 0;  // moves when a job is queued
  // Per-job change counters: every active job, and the last kMaxEndedVersions ended ones.
  std::map<std::string, uint64_t> job_versions_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> ended_ ABSL_GUARDED_BY(mu_);
  uint64_t versions_ ABSL_GUARDED_BY(mu_) = 0;
  // Jobs written by the transaction in progress (Touch), applied by Commit.
  std::vector<std::pair<v1::Job, std::optional<ResolvedSpec>>> touched_ ABSL_GUARDED_BY(mu_);
  // Log lines of the transaction in progress, written by Commit once it has committed.
  std::vector<std::string> committed_logs_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
};

bool IsTerminal(v1::JobState state);

}  // namespace gantry
