// The training of one batch size of a sweep on one rank: the model, its optimizers and
// step, the sampler, the noise stream, the shares and the position, with the two ways a
// BatchRun's state crosses a checkpoint (CaptureBatchRun, RestoreBatchRun).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/clock.h"
#include "common/straggler_tracker.h"
#include "runspec/train_config.h"
#include "worker/checkpoint/training_state.h"
#include "worker/comm/communicator.h"
#include "worker/data/batch_sampler.h"
#include "worker/data/mnist_dataset.h"
#include "worker/models/gan_model.h"
#include "worker/models/normal_noise.h"
#include "worker/optim/optimizer.h"
#include "worker/optim/weight_average.h"
#include "worker/tensor/random.h"
#include "worker/train/data_parallel_step.h"
#include "worker/train/overlap_trial.h"

namespace gantry {

struct BatchRun {
  // A fresh run of batch_sizes[batch_index] training `model` (fresh from MakeModel: zero
  // weights; Initialize or restore them), the seed's noise stream, even shares, no
  // optimizers or step yet.
  BatchRun(const TrainConfig& c, std::unique_ptr<GanModel> model, int64_t dataset_rows, int64_t batch_index,
           int world, const Clock& clock);

  // Whether this batch size has nothing left to train.
  bool Done(int64_t epochs) const { return epoch > epochs || steps_left == 0; }

  int64_t batch_index;
  int64_t batch;
  std::unique_ptr<GanModel> model;
  std::unique_ptr<Optimizer> g_opt, d_opt;
  std::unique_ptr<DataParallelStep> step;
  std::unique_ptr<OverlapTrial> overlap_trial;  // --overlap auto, until it decided (null: none)
  std::unique_ptr<WeightAverage> g_average;  // --g-ema, rank 0 only (the one that samples and saves)
  std::string augment;          // --augment's policy name, which checkpoints record
  EpochSampler sampler;
  Rng noise_rng;                // the model's per-step randomness (GanModel::StepInputs)
  std::vector<int64_t> shares;  // rows of each global batch per rank; sums to batch
  StragglerTracker tracker;     // meaningful on rank 0
  int64_t epoch = 1;            // the epoch in progress, or the next one at a boundary
  int64_t step_in_epoch = 0;    // steps of `epoch` done
  int64_t global_step = 0;      // steps done at this batch size
  int64_t steps_left = 0;       // of --max-steps
  int64_t skips_logged = 0;     // skipped network steps logged so far (rank 0)
  EpochInProgress resumed;      // the part of `epoch` done before a resume (rank 0's sums)
};

// The state of `run` (whose optimizers and step exist) after its latest step; reads only. `epoch`
// describes the epoch in progress (empty at a boundary). Run-wide fields (run_step,
// rows, straggler rows) are the caller's to fill in.
TrainingState CaptureBatchRun(BatchRun& run, const EpochInProgress& epoch, uint64_t seed,
                              int64_t dataset_images, int world_size);

// Puts `state` (which CheckMatchesRun accepted for this run) into `run`, whose optimizers
// and step exist. Shares saved by a run of another world size are replaced by even shares.
absl::Status RestoreBatchRun(const TrainingState& state, int world_size, BatchRun& run);

}  // namespace gantry
