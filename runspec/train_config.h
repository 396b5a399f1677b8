// The typed configuration of a training run, parsed and validated once at the edge
// (flags and/or a YAML/JSON run file) and passed down as this struct.
//
// Every setting has one name, used as the command-line flag (--data-dir) and as the
// key in a run file (data-dir: ...). Flags given on the command line override the
// run file, which overrides the defaults.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/straggler_tracker.h"
#include "runspec/augment_policy.h"
#include "runspec/init_scheme.h"
#include "runspec/learning_rate_rule.h"
#include "runspec/mixed_precision.h"
#include "runspec/model_config.h"
#include "runspec/quality_target.h"
#include "runspec/optimizer_config.h"
#include "runspec/setting_table.h"

namespace gantry {

// Bounds the settings table enforces that other code relies on (no overflow below them).
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 24;          // a global batch
inline constexpr int64_t kMaxRunSteps = 1'000'000'000'000;          // a step count of a run
inline constexpr int64_t kMaxRank = 65535;                           // a rank named by a debug setting

// --overlap: all-reduce gradient buckets while backward computes (on), after backward
// (off), or whichever this run's first steps measure faster (auto; worker/train/overlap_trial.h).
enum class OverlapMode { kOff, kOn, kAuto };

struct TrainConfig {
  std::string model = "dcgan";
  std::string dataset = "fashion-mnist";     // mnist | fashion-mnist | flow | images
  std::string data_dir;                      // empty: the dataset's Debian location
  int64_t epochs = 1;
  std::vector<int64_t> batch_sizes = {64};   // global batch; several make a sweep
  OptimizerConfig optimizer;
  LearningRateRule rate_rule;                // --lr per batch size and warm-up (learning_rate_rule.h)
  // --g-ema: the decay of the generator's weight average (worker/optim/weight_average.h);
  // 0: no average, the live generator makes the samples and the model.
  double g_ema = 0;
  // --augment: the differentiable augmentations of D's inputs in the unconditional GAN
  // step (worker/layers/diff_augment.h); off: D sees the images as they are.
  AugmentPolicy augment;
  DcganConfig dcgan;
  ImageDcganConfig image_dcgan;  // --model dcgan on --dataset images (UsesImageDcgan)
  Pix2pixConfig pix2pix;
  // --mirror: each epoch also visits every image flipped left to right (a set of twice
  // the images; the flipped copy of image i is row count + i).
  bool mirror = false;
  InitScheme init = InitScheme::kGlorotUniform;
  // Safetensors files (comma-separated) whose networks replace the drawn initial weights
  // (worker/train/init_from.h); empty: none.
  std::string init_from;
  uint64_t seed = 1;
  // A kernel backend's name (onednn | eigen); empty: the worker's fastest. Whether the
  // worker has it is the worker's check (ResolveKernels in worker/train/training_device.h).
  std::string kernels;
  std::string device = "cpu";  // cpu | cuda (training_device.h)
  int64_t max_steps = 0;        // per batch size, over all epochs; 0 = no limit
  int64_t limit_images = 0;     // train on the first N images only; 0 = all
  double progress_seconds = 5;  // interval of progress lines
  std::string out;              // the run folder
  int64_t checkpoint_every_steps = 500;  // and at every epoch end; 0: only at epoch ends
  int64_t keep_checkpoints = 3;          // the newest this many stay in RUN/checkpoints
  bool tensorboard = false;              // event files under RUN/tensorboard/ (tensorboard_log.h)
  // Power of one busy core, for the energy estimate where neither NVML nor RAPL can be read
  // (energy_meter.h). 6 W: the sustained power (TDP) per core of current x86 server
  // CPUs, e.g. 280 W / 64 cores (EPYC 7763) = 4.4 W and 270 W / 40 cores (Xeon 8380) =
  // 6.75 W, rounded towards the upper end because a training step keeps its core busy.
  double watts_per_core = 6;
  // The per-epoch quality score (worker/eval/judge.h): auto (score when the dataset's
  // judge is cached, else say once how to make one) | off | fast (the 64 fixed-noise
  // samples) | full (1024 fixed-noise samples: a steadier Fréchet distance). A run never
  // trains a judge itself: that is `gantry-worker train-judge`, run once per dataset.
  std::string quality = "auto";
  QualityTarget target;  // --target-fd / --target-rel-l2 / --stop-at-target (quality_target.h)

  // Mixed precision: operand format, loss scaling, gradient wire format (see
  // mixed_precision.h). Loss scaling defaults to dynamic and the wire to bf16 when the
  // precision is bf16 or fp16; fp32 runs default to neither.
  MixedPrecision mixed;

  // Data parallelism (when launched under mpirun).
  bool sync_bn = false;              // BatchNorm statistics summed across ranks
  bool rebalance = false;            // re-split the global batch by measured speed at epoch ends
  StragglerConfig straggler;         // flagging threshold and window
  double comm_timeout_seconds = 120; // bound on every collective
  OverlapMode overlap = OverlapMode::kAuto;  // --overlap: gradient buckets all-reduced during backward
  double bucket_mb = 4;              // fp32 gradient megabytes per bucket (--bucket-mb)
  int debug_slow_rank = -1;          // make this rank slow on purpose (-1: none)
  double debug_slow_ms = 0;          //   by sleeping this long per step
  double debug_slow_factor = 1;      //   or by stretching its compute this many times
  int64_t debug_crash_after_step = 0;  // rank 0 kills its process after this run step (0: never)

  bool operator==(const TrainConfig&) const = default;
};

// Raw "name -> value" settings as they come from flags or a run file.
using RawSettings = std::map<std::string, std::string>;

// The settings' names with their help text and default, in display order.
const std::vector<SettingInfo>& TrainSettings();

// The setting called `name` (as a flag without "--", or a run-file key), or null.
const SettingInfo* FindSettingInfo(const std::string& name);

// Whether `name` is one of the debug switches (--debug-slow-*, --debug-inject-inf-*):
// for local runs and tests; a coordinator refuses them unless told otherwise.
bool IsDebugSetting(const std::string& name);

// Checks one setting's value alone (its parse and range), not how it combines with
// others: --stop-at-target alone is a valid value though no run could use it without a
// target. Errors name the setting, the bad value and what is accepted; an unknown
// setting is refused by name.
absl::Status CheckSettingValue(const std::string& name, const std::string& value);

// Applies `settings` over the defaults, then checks every value and the combinations
// (e.g. a dynamic-only loss-scale setting with a static scale). Errors name the setting,
// the bad value and what is accepted. Needs no engine: what only a worker can know (is
// a kernel backend built, is a GPU visible) is checked where the job runs.
absl::StatusOr<TrainConfig> ResolveTrainConfig(const RawSettings& settings);

// The data folder the run reads: data_dir, or the dataset's default location.
std::string EffectiveDataDir(const TrainConfig& config);

// Whether the run trains the image DCGAN (worker/models/image_dcgan.h): --model dcgan on
// --dataset images. The MNIST-format sets train the 28x28 DCGAN of the TPU paper.
bool UsesImageDcgan(const TrainConfig& config);

}  // namespace gantry
