// What the coordinator can check of a rollout submission (proto/gantry/v1/rollout_spec.proto)
// without an engine, and the output folder both the rollout command and the pool use.
// The worker checks everything again against the checkpoint and the case it loads
// (worker/rollout/rollout_job.h); these checks only make a bad submission fail at once,
// with the same fixes, rather than on a pool later.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/bounded_number.h"
#include "gantry/v1/rollout_spec.pb.h"
#include "runspec/train_config.h"

namespace gantry {

// The ranges of a rollout's numbers: gantry-worker rollout's flags, a pool's rollout job
// and the coordinator's check of a submission all refuse what lies outside them, with the
// same words (common/bounded_number.h).
inline constexpr IntRange kRolloutSteps{1, 1'000'000};
inline constexpr IntRange kRolloutStartFrame{0, 1'000'000'000};
inline constexpr IntRange kRolloutTile{0, 4096};  // 0: the model's --image-size
inline constexpr IntRange kRolloutOverlap{0, 4095};
inline constexpr IntRange kRolloutGroup{1, 65536};
inline constexpr IntRange kRolloutTileBatch{1, 4096};
inline constexpr IntRange kRolloutReportEvery{1, 1'000'000};
inline constexpr int64_t kMaxRolloutSteps = kRolloutSteps.hi;
inline constexpr int64_t kMaxRolloutTileBatch = kRolloutTileBatch.hi;

// A rollout's numbers, as a flag or a field gives them (unset: the default).
struct RolloutNumbers {
  int64_t steps = 0;
  std::optional<int64_t> start_frame = std::nullopt;
  std::optional<int64_t> tile = std::nullopt;
  std::optional<int64_t> overlap = std::nullopt;
  std::optional<int64_t> group = std::nullopt;
  std::optional<int64_t> tile_batch = std::nullopt;
  std::optional<int64_t> report_every = std::nullopt;
};

// How a refusal names a number: as gantry-worker rollout's flag (--start-frame) or as the
// submission's field (rollout.start_frame).
enum class RolloutNaming { kFlags, kFields };

// Each number in its range above, and a given overlap below a given (non-zero) tile.
// INVALID_ARGUMENT "--steps: bad value '0' (an integer in [1, 1000000])", or the field's name.
absl::Status CheckRolloutNumbers(const RolloutNumbers& numbers, RolloutNaming naming);

// Each field on its own: source_job_id and case_dir given, the numbers as
// CheckRolloutNumbers says, blend gaussian | linear | none. INVALID_ARGUMENT naming the
// field ("rollout.steps: ...").
absl::Status CheckRolloutSpec(const v1::RolloutSpec& rollout);

// Against the source run's resolved settings: it trained --model pix2pix on --dataset
// flow (a next-frame model), the tile (when given) is its --image-size, and the overlap
// is below that tile. INVALID_ARGUMENT naming the field and the fix.
absl::Status CheckRolloutFitsRun(const v1::RolloutSpec& rollout, const TrainConfig& source,
                                 const std::string& source_job_id);

// The case folder's name: "data/c/" and "data/c" both name c.
std::string RolloutCaseName(const std::string& case_dir);

// RUN/rollout-<case folder name>: where `gantry-worker rollout` writes without --out.
std::string RolloutOutputFolder(const std::string& run_dir, const std::string& case_dir);

// RUN/rollout-<case folder name>-<job id>: where the rollout job `job_id` writes, its own
// folder (two rollouts of one run over one case never share one), as the coordinator and
// `gantry status` show it.
std::string RolloutJobOutputFolder(const std::string& run_dir, const std::string& case_dir, const std::string& job_id);

}  // namespace gantry
