// The training run of one rank: for each global batch size of the sweep, a fresh model
// from the same seed trained for the configured epochs by all ranks in lockstep
// (synchronous data-parallel SGD; one rank is the plain single-process case).
//
// Rank 0 owns the outputs: epochs.csv rows, stragglers.csv, samples, progress lines.
// Every step it gathers each rank's timings (O(ranks) numbers) for the straggler
// tracker, and at each epoch start it broadcasts the per-rank shares of the global
// batch (even, or rebalanced by measured speed with --rebalance).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "worker/comm/communicator.h"
#include "worker/data/mnist_dataset.h"
#include "worker/tensor/backend.h"
#include "worker/train/data_parallel_step.h"
#include "worker/train/epoch_metrics.h"
#include "worker/train/run_folder.h"
#include "worker/train/train_config.h"
#include "worker/train/train_observer.h"

namespace gantry {

class Trainer {
 public:
  // `folder` is used on rank 0 only and may be null elsewhere. All references must
  // outlive the Trainer.
  Trainer(const TrainConfig& config, const ImageDataset& data, const RunFolder* folder, Communicator& comm,
          const Clock& clock, Backend& backend);

  // Trains every batch size in turn. On rank 0 returns all epoch rows (also written to
  // epochs.csv); other ranks return an empty list.
  absl::StatusOr<std::vector<EpochRow>> Run();

  // Follows (and may steer or stop) the run; see train_observer.h. Set it on every rank
  // or on none, before Run(). Run() returns CANCELLED when the observers stop it.
  void set_observer(TrainObserver* observer) { observer_ = observer; }

 private:
  struct BatchRun;
  absl::StatusOr<std::vector<EpochRow>> TrainOneBatchSize(int64_t batch);
  absl::StatusOr<EpochRow> TrainOneEpoch(BatchRun& run, int64_t epoch);
  absl::Status AgreeOnShares(BatchRun& run, int64_t epoch);
  absl::Status FinishEpoch(BatchRun& run, const EpochRow& row);
  // Rank 0: a warning per skipped network step (the first few per batch size).
  void ReportSkips(BatchRun& run, const DataParallelStepResult& r, int64_t epoch, int64_t step);

  bool is_root() const { return comm_.rank() == 0; }

  const TrainConfig& config_;
  const ImageDataset& data_;
  const RunFolder* folder_;
  Communicator& comm_;
  const Clock& clock_;
  Backend& backend_;
  CommOptions comm_options_;
  TrainObserver* observer_ = nullptr;  // not owned; null: nobody follows the run
};

// A fixed-width table of the rows (one line per epoch) for the terminal.
std::string FormatEpochTable(const std::vector<EpochRow>& rows);

}  // namespace gantry
