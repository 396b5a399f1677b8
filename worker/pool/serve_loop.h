// The pool's life: rounds in which rank 0 deals with the coordinator and then tells
// every rank what to do (pool_collectives.h), until the pool is stopped.
//
// Rank 0, each round, does at most one bounded thing: register the group (again, when
// the coordinator forgot it), long-poll AcquireJob for up to --poll-seconds, or wait up to
// that long for the previous job's last reports to be delivered (a new job is only taken
// once the coordinator has the old one's final state, or has dropped it). Failures to
// reach the coordinator back off exponentially, a round at a time, so the other ranks
// hear from rank 0 at least every round and bound their own waits by it.
//
// A job runs on every rank (job_runner.h) while rank 0's heartbeat thread keeps the
// lease and its report thread sends progress, epoch rows and straggler events and brings
// back cancel requests and shard plans. Its end is reported as SUCCEEDED, FAILED or
// CANCELLED; a job the coordinator no longer has for the group is dropped.
//
// Stopping: SIGTERM/SIGINT on any rank stop training before the next step on every rank
// and end the pool with exit code 128 + signal after rank 0 flushed its buffered reports
// (for up to --flush-seconds). The job it was running is released (final state QUEUED):
// it goes back to the queue at once (or, if the release cannot be delivered, when the
// group's lease runs out), and its next attempt resumes from its newest checkpoint
// (job_runner.h). With
// --max-jobs N the pool ends with 0 after N jobs. A refusal of the group (a wrong token)
// ends it with 2; a failure that leaves the ranks out of step ends it with 1 and asks the
// program to end every rank (ServeEnd::abort_group): only main() ends processes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bounded_number.h"
#include "worker/comm/communicator.h"
#include "worker/pool/backoff.h"
#include "worker/pool/coordinator_client.h"
#include "worker/pool/heartbeat_thread.h"
#include "worker/pool/job_log_sink.h"
#include "worker/pool/job_runner.h"
#include "worker/pool/pool_collectives.h"
#include "worker/pool/report_sender.h"

namespace gantry {

// The ranges of serve's numbers (its flags check them; CheckServeOptions again): every
// duration finite and bounded, so no wait is unbounded and no loop spins. A stop
// (SIGTERM) ends the pool within kStopBoundSeconds plus --flush-seconds, whatever the
// coordinator does (it may be gone, or hold every call open): see serve_loop.cc.
inline constexpr IntRange kServeMaxJobs{0, 1'000'000'000};
inline constexpr RealRange kServePollSeconds{0.1, 300};
inline constexpr RealRange kServeReportSeconds{0.05, 3600};
inline constexpr RealRange kServePlanWaitSeconds{0, 600};
inline constexpr RealRange kServeFlushSeconds{0, 600};
inline constexpr RealRange kServeRpcTimeoutSeconds{0.1, 600};
inline constexpr RealRange kServeMaxBackoffSeconds{0.01, 3600};
inline constexpr double kStopBoundSeconds = 5;

struct ServeOptions {
  CoordinatorClientOptions client;
  std::string runs_dir = "runs";
  std::string name;                // the group's name at the coordinator
  double poll_seconds = 5;         // AcquireJob's long poll, and the longest round
  double report_seconds = 2;       // progress reports while training
  double plan_wait_seconds = 2;    // wait for the coordinator's plan at an epoch start
  double flush_seconds = 5;        // delivering buffered reports when stopping
  int max_jobs = 0;                // end after this many jobs (0: never)
  BackoffPolicy backoff;
};

// OK when every number of `options` is inside its range above; INVALID_ARGUMENT naming the
// flag (common/bounded_number.h's words) otherwise.
absl::Status CheckServeOptions(const ServeOptions& options);

// How the pool ended.
struct ServeEnd {
  int exit_code = 0;
  // The ranks are out of step (a rank failed mid-job, or they lost each other): the
  // others may be stuck in a collective, so the program must end every rank of the group
  // (MPI_Abort) rather than return.
  bool abort_group = false;
};

class ServeLoop {
 public:
  // `api` is rank 0's (null elsewhere); `log_sink` rank 0's job log.
  ServeLoop(Communicator& comm, CoordinatorApi* api, ServeOptions options, JobLogSink* log_sink);
  ~ServeLoop();

  // Serves until stopped, or until the ranks fall out of step.
  ServeEnd Run();

 private:
  struct ActiveJob;

  // Rank 0: the command of this round.
  PoolCommand LeaderRound();
  PoolCommand Register();
  PoolCommand Acquire();
  void Pause(Backoff& backoff);
  // Every rank.
  void RunJob(const v1::AcquireJobResponse& job);
  void AfterJob(const JobOutcome& outcome);  // rank 0
  void FinishActiveJob();                    // rank 0
  ServeEnd Stop(const PoolCommand& command);

  bool is_root() const { return comm_.rank() == 0; }
  double round_timeout_seconds() const;

  Communicator& comm_;
  CoordinatorApi* api_;
  const ServeOptions options_;
  bool out_of_step_ = false;  // a job failed in a way that leaves the ranks out of step
  JobRunner runner_;
  std::vector<std::string> hosts_;  // rank 0
  std::vector<std::string> devices_;  // rank 0: each rank's DescribeRankDevice
  std::string group_id_;
  bool group_unknown_ = false;
  Backoff register_backoff_;
  Backoff acquire_backoff_;
  std::unique_ptr<HeartbeatThread> heartbeat_;
  std::unique_ptr<ActiveJob> active_;
  int jobs_done_ = 0;
};

}  // namespace gantry
