// Hooks for a caller that follows a training run while it happens and may steer it: the
// worker pool mode (worker/pool) reports each step and epoch to the coordinator, takes
// the coordinator's shard plans and stops a run the coordinator cancels. A Trainer
// without an observer (`gantry-worker train`) behaves exactly as before.
//
// Contract: an observer is set on every rank of the run or on none, because its presence
// adds one collective per step (the stop agreement below). The reporting hooks and
// SharesFor are called on rank 0 only, from the training thread; ShouldStop on every
// rank. Hooks must return quickly (they run between steps).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/straggler_tracker.h"
#include "worker/comm/communicator.h"
#include "report/epoch_metrics.h"

namespace gantry {

// Where the run is after a step, and how fast it goes.
struct StepProgress {
  int64_t batch_size = 0;
  int64_t epoch = 0;           // 1-based
  int64_t step = 0;            // step within the epoch, 1-based
  int64_t steps_in_epoch = 0;
  int64_t global_step = 0;     // steps done at this batch size
  double step_seconds = 0;     // this step, rank 0's wall time
  double samples_per_s = 0;    // over the recent steps
  double d_loss = 0;           // running means over the epoch so far
  double g_loss = 0;
};

// A checkpoint of the run, and where training continues from it.
struct CheckpointInfo {
  int64_t run_step = 0;        // steps of the whole run it holds
  int64_t batch_size = 0;      // training continues at this batch size's
  int64_t epoch = 0;           //   epoch (1-based; past the last: the next batch size)
  int64_t step_in_epoch = 0;   //   after this many of its steps
};

// One rank's median step times over the straggler window at an epoch's end, with the
// share of the global batch it ran with: what the coordinator's epoch planner needs to rebalance.
struct RankWindow {
  int rank = 0;
  int64_t share = 0;
  int window_steps = 0;        // steps the medians cover (0: none yet)
  StepTiming median;
};

class TrainObserver {
 public:
  virtual ~TrainObserver() = default;

  // Rank 0: the shares of the global batch for (batch_size, epoch), one per rank and
  // summing to batch_size, or nullopt to let the trainer decide (even shares, or its
  // own rebalancing with --rebalance). Called at each epoch's start; may wait briefly.
  virtual std::optional<std::vector<int64_t>> SharesFor(int64_t batch_size, int64_t epoch) { return std::nullopt; }
  // Rank 0: after every step.
  virtual void OnStep(const StepProgress& progress) {}
  // Rank 0: a straggler event, after its row went to stragglers.csv.
  virtual void OnStraggler(const StragglerEvent& event, int64_t batch_size, int64_t epoch) {}
  // Rank 0: an epoch's row, after it went to epochs.csv, with each rank's window.
  virtual void OnEpochRow(const EpochRow& row, const std::vector<RankWindow>& windows) {}
  // Every rank, before every step: true asks the whole run to stop (see StopPoint).
  virtual bool ShouldStop() { return false; }
  // Rank 0: the run folder, when training starts (before OnResumed).
  virtual void OnRunFolder(const std::string& path) {}
  // Rank 0, when the run stops at a StopPoint: whether to write a checkpoint of the
  // steps done since the last one first (so a later attempt loses none of them).
  virtual bool CheckpointWhenStopping() { return true; }
  // Rank 0: after each checkpoint was written (durably: a crash from here on resumes
  // from it or a later one).
  virtual void OnCheckpoint(const CheckpointInfo& checkpoint) {}
  // Rank 0: the run resumes from the checkpoint `from`, which holds these epoch rows
  // (epochs.csv was reset to them). A reporter that may not have delivered some of them
  // before the interruption sends them again; OnEpochRow follows for the epochs trained
  // from here.
  virtual void OnResumed(const CheckpointInfo& from, const std::vector<EpochRow>& rows) {}
};

// The per-step stop agreement: every rank contributes its observer's ShouldStop() to a
// one-float sum all-reduce, so all ranks see the same answer and stop before the same
// step. Returns OK to go on, CANCELLED ("stopped before batch B epoch E step S") to stop,
// or the collective's error.
absl::Status StopPoint(Communicator& comm, TrainObserver& observer, const CommOptions& opts, int64_t batch_size,
                       int64_t epoch, int64_t step);

// `planned` when it is a usable split of `batch_size` over `world_size` ranks (one share
// per rank, each >= 1, summing to the batch); otherwise nullopt, with a warning logged.
std::optional<std::vector<int64_t>> UsableShares(const std::optional<std::vector<int64_t>>& planned,
                                                 int64_t batch_size, int world_size);

// Each rank's window medians from rank 0's tracker, with the shares they ran with.
std::vector<RankWindow> RankWindows(const StragglerTracker& tracker, const std::vector<int64_t>& shares);

}  // namespace gantry
