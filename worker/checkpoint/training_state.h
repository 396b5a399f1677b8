// Everything needed to continue a training run exactly where it stood: what a
// checkpoint holds (checkpoint_codec.h writes and reads it).
//
// "Exactly" means bit for bit: a run interrupted after any checkpoint and resumed from
// it ends with the weights, optimizer state, loss scales and epochs.csv rows (timing
// columns aside) of the run that was never interrupted. So the state holds every input
// of the remaining steps:
//   - both networks' flat parameters and BatchNorm buffers, both optimizers' buffers
//     and step counts, both loss scalers, the generator's weight average (--g-ema);
//   - the record of the settings that shape the run (runspec/resume_rules.h), so a resume
//     that would train or score otherwise is refused even when run.json was edited;
//   - the augmentation policy (--augment), to refuse a resume that would augment otherwise
//     (its draws need nothing: a pure function of (seed, steps done, row));
//   - the sampler position: the epoch's permutation is a pure function of (seed,
//     epoch), so (epoch, steps done in it) says which samples come next;
//   - the noise generator's state (one integer). Dropout masks need nothing: they are
//     a pure function of (seed, steps done at this batch size);
//   - the per-rank shares of the global batch (they set the rows each rank takes and the
//     order of the gradient sums);
//   - the partial sums of the epoch in progress and the rows already written, so the
//     resumed epoch's row and epochs.csv come out whole, with no row lost or doubled.
// The straggler tracker's timing window is not state of the training arithmetic; it
// restarts empty on resume (docs/run-folder.md, "Checkpoints and resume").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/epoch_metrics.h"
#include "worker/optim/loss_scaler.h"

namespace gantry {

// Where the run stands. At an epoch boundary step_in_epoch is 0 and `epoch` is the next
// epoch to run; a batch size whose epochs (or --max-steps) are used up has
// epoch > epochs or steps_left == 0.
struct SweepPosition {
  int64_t batch_index = 0;     // into TrainConfig::batch_sizes
  int64_t batch_size = 0;      // batch_sizes[batch_index], checked on resume
  int64_t epoch = 1;           // 1-based
  int64_t step_in_epoch = 0;   // steps of `epoch` done; the sampler offset is this x batch_size
  int64_t batch_step = 0;      // steps done at this batch size (seeds dropout; counts --debug-inject-inf-step)
  int64_t run_step = 0;        // steps done over the whole run; names the checkpoint file
  int64_t steps_left = 0;      // of --max-steps at this batch size (INT64_MAX: no limit)
  uint64_t seed = 0;
  int64_t dataset_images = 0;  // images the sampler permutes
  int world_size = 1;          // ranks of the run that saved the state
  uint64_t noise_rng_state = 0;
  int64_t skips_logged = 0;    // skipped-step warnings already logged at this batch size
  bool operator==(const SweepPosition&) const = default;
};

// One tensor of a flat buffer: its name and shape, as FlatParameters lays them out.
struct LayoutEntry {
  std::string name;
  std::vector<int64_t> dims;
  bool operator==(const LayoutEntry&) const = default;
};

struct NetworkState {
  std::vector<LayoutEntry> param_layout;
  std::vector<LayoutEntry> buffer_layout;
  std::vector<float> params;   // the flat parameter buffer
  std::vector<float> buffers;  // the flat BatchNorm buffer
  bool operator==(const NetworkState&) const = default;
};

struct OptimizerState {
  std::string kind;                        // "adam" | "sgd"
  int64_t steps_taken = 0;
  std::vector<std::vector<float>> buffers;  // Optimizer::state(): Adam m, v; SGD momentum
  bool operator==(const OptimizerState&) const = default;
};

// The epoch in progress, when the state was taken part way through one.
struct EpochInProgress {
  EpochSums sums;
  double seconds = 0;           // wall time spent in it so far
  int64_t straggler_flags = 0;  // straggler events raised in it so far
  bool operator==(const EpochInProgress&) const = default;
};

// The model of a checkpoint without a model section (written before models were named).
inline constexpr char kModelOfUnnamedCheckpoints[] = "dcgan";
// The --augment policy of a checkpoint without an augment section: a run without one, or
// one from before the setting (runspec/augment_policy.h's name of no policy).
inline constexpr char kAugmentOfCheckpointsWithout[] = "off";

struct TrainingState {
  std::string model = kModelOfUnnamedCheckpoints;  // GanModel::name() of the run that saved it
  SweepPosition position;
  NetworkState g, d;
  // --g-ema: the generator's weight average (weight_average.h), with G's layouts; absent
  // in a run without one and in checkpoints from before it.
  std::optional<NetworkState> g_average;
  // --augment's canonical policy name (AugmentPolicyName): which transforms D's inputs
  // passed through. A resumed run must augment alike (checkpoint_match.h).
  std::string augment = kAugmentOfCheckpointsWithout;
  // The settings record (SettingsRecordOf: every setting but the free ones, as given);
  // absent in checkpoints from before it (a resume then trusts run.json, with a warning).
  std::optional<std::map<std::string, std::string>> settings;
  OptimizerState g_opt, d_opt;
  LossScalerState g_scaler, d_scaler;
  std::vector<int64_t> shares;   // rows of each global batch per rank
  EpochInProgress epoch;         // empty at an epoch boundary
  std::vector<EpochRow> rows;    // every epochs.csv row written so far
  std::string straggler_rows;    // stragglers.csv lines written so far, without the header
  bool operator==(const TrainingState&) const = default;
};

}  // namespace gantry
