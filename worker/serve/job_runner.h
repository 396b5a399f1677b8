// Runs one job the coordinator handed to the pool, on every rank: the job's RunSpec
// becomes the same settings and TrainConfig `gantry-worker train` would use
// (RunSpecToSettings, ResolveTrainConfig), rank 0 makes the run folder, every rank
// loads the data, and the ordinary Trainer trains it with this rank's observer.
//
// The run folder is <runs_dir>/<job id> for a job's first attempt and
// <runs_dir>/<job id>.attempt-<N> for a later one (a requeued job starts again from
// the beginning; nothing is resumed), with a numbered suffix if that name is taken.
//
// Every step before training ends in an agreement of all ranks, so a problem on any
// rank (a data folder missing on one host) fails the job on all of them alike and the
// pool stays usable. Once training runs, the outcome is agreed by construction (the
// trainer's stop agreement, or up-front checks every rank makes alike), except for a
// failure of one rank mid-run (a non-finite loss seen by rank 0, a collective that timed
// out), after which the ranks are out of step: that outcome is kFatal and the pool must
// end.
#pragma once

#include <string>

#include "gantry/v1/coordinator.pb.h"
#include "worker/comm/communicator.h"
#include "worker/serve/dataset_cache.h"
#include "worker/serve/job_control.h"
#include "worker/serve/job_log_sink.h"
#include "worker/train/train_observer.h"

namespace gantry {

struct JobOutcome {
  enum Kind {
    kSucceeded,
    kFailed,       // the job cannot run (bad spec for this pool, data missing, ...); the pool goes on
    kCancelled,    // the coordinator cancelled it
    kDropped,      // the coordinator no longer has it for this group
    kInterrupted,  // a rank was asked to stop (SIGTERM/SIGINT)
    kFatal,        // a failure mid-run that leaves the ranks out of step: end the pool
  };
  Kind kind = kSucceeded;
  std::string message;
  bool report_failure = false;  // kFatal: a failure of the job itself, to report as FAILED
};

class JobRunner {
 public:
  // `log_sink` (rank 0; null elsewhere) is pointed at the job's log.txt while it runs.
  JobRunner(Communicator& comm, std::string runs_dir, JobLogSink* log_sink);

  // Trains `job` (its first plan goes to `control` beforehand, on rank 0). `observer`
  // is this rank's; `control` is rank 0's and null elsewhere. Rank 0's outcome is the
  // one that counts for reporting.
  JobOutcome Run(const v1::AcquireJobResponse& job, TrainObserver& observer, JobControl* control);

  // The run folder of the latest job (rank 0).
  const std::string& run_folder() const { return run_folder_; }

 private:
  bool is_root() const { return comm_.rank() == 0; }

  Communicator& comm_;
  const std::string runs_dir_;
  JobLogSink* log_sink_;
  DatasetCache data_;
  std::string run_folder_;
};

// <runs_dir>/<job id>, or <job id>.attempt-<N> after the first attempt; "-2", "-3", ...
// appended while the path exists.
std::string JobRunFolderPath(const std::string& runs_dir, const std::string& job_id, int attempt);

}  // namespace gantry
