// Runs one job the coordinator handed to the pool, on every rank, through the same
// entry point as `gantry-worker train [--resume]` (RunTrainJob, train_job.h): the job's
// RunSpec becomes the settings `gantry-worker train` would take (RunSpecToSettings),
// rank 0 makes or reopens the run folder, every rank loads the data (from the pool's
// cache), and the ordinary Trainer trains it with this rank's observer.
//
// Run folders: <runs_dir>/<job id> for a job's first attempt. A later attempt (the job
// was requeued after its group was lost) continues the earlier attempt's run folder from
// its newest usable checkpoint when rank 0 finds one there: the folder the coordinator
// has in Job.checkpoint, else <runs_dir>/<job id>. The resumed run is bit-identical to
// one never interrupted (same number of ranks), its epochs.csv and the coordinator's
// rows hold each epoch once, and no sample of the resumed epoch is seen twice. With no
// usable checkpoint (none written yet, a folder on another host, every checkpoint
// damaged) the attempt starts again from the beginning in
// <runs_dir>/<job id>.attempt-<N>, and says why in the log.
//
// A rollout job (Job.rollout) runs RunRolloutJob (worker/rollout/rollout_job.h) as
// `gantry-worker rollout --run RUN --case CASE ...` would, RUN being the source job's run
// folder: its outputs go to RUN/rollout-<case>/, its log to log.txt there. Its progress
// is its model step (Job.rollout's comment); it stops between two steps when cancelled
// or signalled. Its refusals are
// agreed by every rank (kFailed); a failure during its steps' collectives is kFatal.
// A generate job (Job.generate) runs RunGenerateJob (worker/generate/generate_job.h) as
// `gantry-worker generate --run RUN --out RUN/generate-<name> ...` would; its refusals
// (an output folder that holds files included) are kFailed, a failure in its batches'
// collectives kFatal.
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
#include "worker/pool/dataset_cache.h"
#include "worker/pool/job_control.h"
#include "worker/pool/job_log_sink.h"
#include "worker/train/train_job.h"
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
  // Rank 0's choice of folder to resume, shared: "" on every rank to start afresh.
  absl::StatusOr<std::string> AgreeOnResume(const v1::Job& job);
  // A rollout job, on every rank.
  JobOutcome RollOut(const v1::Job& job, TrainObserver& observer, JobControl* control);
  // A generate job, on every rank.
  JobOutcome Generate(const v1::Job& job, TrainObserver& observer, JobControl* control);
  // One RunTrainJob with this pool's data cache and logging.
  // `control` (rank 0's, may be null) is marked gone when a later attempt fenced the run
  // folder.
  TrainJobResult Train(const v1::Job& job, RawSettings settings, bool resume, TrainObserver& observer,
                       JobControl* control);

  Communicator& comm_;
  const std::string runs_dir_;
  JobLogSink* log_sink_;
  DatasetCache data_;
  std::string run_folder_;
};

// <runs_dir>/<job id>, or <job id>.attempt-<N> after the first attempt; "-2", "-3", ...
// appended while the path exists.
std::string JobRunFolderPath(const std::string& runs_dir, const std::string& job_id, int attempt);

// Rank 0: the run folder a later attempt of `job` continues, or "" to start again: the
// first of the coordinator's Job.checkpoint.run_folder and <runs_dir>/<job id> that
// holds at least one checkpoint file. Attempt 1 never resumes. `why_not` says why
// nothing was found, when it matters (an earlier attempt's folder that is not here).
std::string ResumableRunFolder(const std::string& runs_dir, const v1::Job& job, std::string* why_not);

}  // namespace gantry
