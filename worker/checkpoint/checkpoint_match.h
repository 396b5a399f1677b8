// Whether a decoded checkpoint belongs to a run: same model shapes, optimizer, sweep,
// seed and dataset size, and a position that lies inside the run. A run resumes only
// from a checkpoint that passes, so a checkpoint copied into the wrong run folder, or a
// run.json edited after the start, is refused with a message naming the difference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runspec/train_config.h"
#include "worker/checkpoint/training_state.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {

struct CheckpointExpectations {
  std::string model;                // --model
  NetworkState g_layout, d_layout;  // layouts only, no values
  std::string optimizer;            // "adam" | "sgd"
  std::vector<int64_t> batch_sizes;
  uint64_t seed = 0;
  int64_t dataset_images = 0;
  bool g_average = false;           // --g-ema: the checkpoint holds G's weight average
  std::string augment = kAugmentOfCheckpointsWithout;  // --augment's policy name (AugmentPolicyName)
};

// What the run of `config` on `dataset_images` images expects (builds its model once to
// read the layouts).
CheckpointExpectations ExpectationsFor(const TrainConfig& config, int64_t dataset_images);

// OK, or FAILED_PRECONDITION whose message starts with `name` and names the first
// difference (or DATA_LOSS for a position that no run could have saved).
absl::Status CheckMatchesRun(const TrainingState& state, const CheckpointExpectations& run, const std::string& name);

}  // namespace gantry
