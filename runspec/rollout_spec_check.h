// What the coordinator can check of a rollout submission (proto/gantry/v1/rollout_spec.proto)
// without an engine, and the output folder both the rollout command and the pool use.
// The worker checks everything again against the checkpoint and the case it loads
// (worker/rollout/rollout_job.h); these checks only make a bad submission fail at once,
// with the same fixes, rather than on a pool later.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gantry/v1/rollout_spec.pb.h"
#include "runspec/train_config.h"

namespace gantry {

inline constexpr int64_t kMaxRolloutSteps = 1'000'000;
inline constexpr int64_t kMaxRolloutTileBatch = 4096;

// Each field on its own: source_job_id and case_dir given, steps in [1,
// kMaxRolloutSteps], start_frame >= 0, tile >= 0 (0: the model's), overlap >= 0 and
// below a given tile, blend gaussian | linear | none, group >= 1, tile_batch in [1,
// kMaxRolloutTileBatch]. INVALID_ARGUMENT naming the field ("rollout.steps: ...").
absl::Status CheckRolloutSpec(const v1::RolloutSpec& rollout);

// Against the source run's resolved settings: it trained --model pix2pix on --dataset
// flow (a next-frame model), the tile (when given) is its --image-size, and the overlap
// is below that tile. INVALID_ARGUMENT naming the field and the fix.
absl::Status CheckRolloutFitsRun(const v1::RolloutSpec& rollout, const TrainConfig& source,
                                 const std::string& source_job_id);

// The case folder's name: "data/c/" and "data/c" both name c.
std::string RolloutCaseName(const std::string& case_dir);

// RUN/rollout-<case folder name>: where `gantry-worker rollout` writes without --out,
// and where a rollout job writes.
std::string RolloutOutputFolder(const std::string& run_dir, const std::string& case_dir);

}  // namespace gantry
