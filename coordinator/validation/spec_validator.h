// Checks a submitted job with the worker's own validator, and confines its data path.
// A rollout (SubmitJobRequest.rollout) or a generate (SubmitJobRequest.generate) is
// checked field by field with the run-spec library's checks (runspec/rollout_spec_check.h,
// runspec/generate_spec_check.h), and its case folder confined the same way; what
// needs the source job (it exists and finished) is the Coordinator's.
//
// There is one validator: a RunSpec is turned into the worker's raw settings and given
// to ResolveTrainConfig (runspec/train_config.h), one setting at a time so that an
// error names its field ("spec.lr: --lr: bad value ..."), then all together. The data
// folder (data_dir, or the dataset's default location when unset) must resolve inside
// one of the coordinator's data roots and be a folder.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/validation/data_roots.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry {

// What the coordinator needs of a valid spec to schedule and plan it.
struct ResolvedSpec {
  std::vector<int64_t> batch_sizes;
  int64_t epochs = 1;
  uint64_t seed = 1;
  bool rebalance = false;
  int straggler_window = 20;
  std::string data_dir;  // resolved inside a data root
  bool needs_gpus = false;  // device cuda: only groups whose ranks all have a GPU run it
  int64_t min_share = 1;    // the fewest rows of a global batch any rank may get (MinShare)
  // A rollout job: no batch sizes, epochs or shard plans; its tiles spread over any
  // number of ranks; data_dir is its case folder.
  bool rollout = false;
  // A generate job: the same (its samples spread over any number of ranks); data_dir is
  // its case folder, if any.
  bool generate = false;
  // A training job: batch sizes, epochs and shard plans.
  bool trains() const { return !rollout && !generate; }
};

// Bounds on what a client may send; larger requests are refused by field.
struct RequestBounds {
  static constexpr int kMaxStringChars = 4096;
  static constexpr int kMaxNameChars = 128;
  static constexpr int kMaxBatchSizes = 64;
  static constexpr int kMaxWorldSize = 4096;
  static constexpr int kMaxAttempts = 100;
};

class SpecValidator {
 public:
  // allow_debug_settings: accept submissions with debug switches (gantry-coordinator
  // --allow-debug-settings, for tests and local experiments).
  explicit SpecValidator(DataRoots roots, bool allow_debug_settings = false)
      : roots_(std::move(roots)), allow_debug_settings_(allow_debug_settings) {}

  // The spec's resolved form, or INVALID_ARGUMENT naming the field ("spec.lr", ...).
  absl::StatusOr<ResolvedSpec> Resolve(const v1::RunSpec& spec) const;

  // A whole submission: the spec, no debug switch unless allowed, and world_size,
  // max_attempts and name within bounds (the name one line of printable UTF-8, no
  // control characters); with a world size, every batch size must split across it
  // (CheckBatchFitsRanks).
  absl::StatusOr<ResolvedSpec> CheckSubmit(const v1::SubmitJobRequest& request) const;

  // A rollout's resolved form: its fields (CheckRolloutSpec) and its case folder, inside
  // a data root and holding flow.json. INVALID_ARGUMENT naming the field.
  absl::StatusOr<ResolvedSpec> ResolveRollout(const v1::RolloutSpec& rollout) const;

  // A whole rollout submission: world_size, max_attempts and name as CheckSubmit, no
  // spec (the job takes its source's), and ResolveRollout.
  absl::StatusOr<ResolvedSpec> CheckRolloutSubmit(const v1::SubmitJobRequest& request) const;
  // A generate's fields (CheckGenerateSpec) and case folder (when given: inside a data
  // root, holding flow.json), as data_dir of a generate ResolvedSpec.
  absl::StatusOr<ResolvedSpec> ResolveGenerate(const v1::GenerateSpec& generate) const;
  // A generate submission: the submission's own fields as for a run, `spec` and
  // `rollout` unset, then ResolveGenerate.
  absl::StatusOr<ResolvedSpec> CheckGenerateSubmit(const v1::SubmitJobRequest& request) const;

  const DataRoots& roots() const { return roots_; }

 private:
  // world_size, max_attempts and name within bounds.
  static absl::Status CheckSubmissionFields(const v1::SubmitJobRequest& request);

  DataRoots roots_;
  bool allow_debug_settings_;
};

}  // namespace gantry
