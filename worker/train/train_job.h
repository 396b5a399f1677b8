// One training job on every rank of a group, from rank 0's settings to a finished run
// folder: a new run, or the continuation of an interrupted one from its newest
// checkpoint (resume.h). It is what `gantry-worker train [--resume RUN]` does, and what a
// worker pool (`gantry-worker serve`) runs for each job it is given, including a job
// that comes back to the queue: resume its run folder.
//
// Ranks agree on every step before training (settings, that every batch size gives each
// rank enough rows, run folder, data and its shape against the model's, checkpoint), so
// a bad request ends on every rank alike with kRefused and the same message. A
// failure while training is one rank's (kFailed); the other ranks may then be stuck
// in a collective until --comm-timeout, so under MPI the caller should abort the job.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/epoch_metrics.h"
#include "runspec/train_config.h"
#include "worker/comm/communicator.h"
#include "worker/data/mnist_dataset.h"
#include "worker/run/run_folder.h"
#include "worker/train/train_observer.h"

namespace gantry {

// The training images of `dir`, cut to the first `limit_images` when 0 < limit < its size
// (--limit-images); images not of the shape `need` says may be refused as soon as that
// is known (RunTrainJob checks the shape of what comes back anyway). The dataset must
// stay valid until RunTrainJob returns.
using DatasetSource = std::function<absl::StatusOr<const ImageDataset*>(const std::string& dir, int64_t limit_images,
                                                                        const ImageRequirement& need)>;

struct TrainJobRequest {
  // Rank 0's: a new run's settings, or with `resume` ResumeSettings(RUN, overrides),
  // whose `out` is the run folder to continue. Other ranks' are ignored.
  absl::StatusOr<RawSettings> settings;
  bool resume = false;
  // This rank's observer of the training (train_observer.h: on every rank or none).
  TrainObserver* observer = nullptr;
  // Where the images come from; empty: read the IDX files for this job alone.
  DatasetSource data;
  // Rank 0's, a pool job's: its claim of the run folder (run_folder.h: the attempt as
  // fencing epoch); none for a run of its own.
  std::optional<RunFolderClaim> claim;
};

enum class TrainJobEnd {
  kTrained,          // trained to the end
  kAlreadyFinished,  // resume of a run that had finished: nothing trained
  kRefused,          // bad settings, folder, data or nothing to resume: nothing trained (every rank)
  kFailed,           // failed while training (this rank's error)
};

struct TrainJobResult {
  TrainJobEnd end = TrainJobEnd::kFailed;
  absl::Status status;          // why, for kRefused and kFailed; ABORTED for kRefused:
                                // another rank's fault, which that rank reports
  bool collective_failed = false;  // kRefused because an agreement itself failed (a rank
                                   // died or hung): the ranks are out of step
  TrainConfig config;           // as resolved (out: the run folder)
  std::vector<EpochRow> rows;   // rank 0: every row of the run (also in epochs.csv)
  std::string timing_markdown;  // rank 0: timing.md as written
};

// Called on every rank once the run folder is known and before the job logs anything:
// rank 0 gets the path of the run's log.txt (appended to on resume); other ranks, and
// rank 0 when the folder could not be opened, get "".
using LogSetup = std::function<void(int rank, const std::string& log_path)>;

TrainJobResult RunTrainJob(Communicator& comm, const TrainJobRequest& request, const LogSetup& set_up_logging);

}  // namespace gantry
