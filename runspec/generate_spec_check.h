// What the coordinator can check of a generate submission (proto/gantry/v1/generate_spec.proto)
// without an engine, and the output folder both the pool and the CLI name. The worker
// checks everything again against the checkpoint it loads (worker/generate/generate_job.h);
// these checks make a bad submission fail at once, with the same fixes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/bounded_number.h"
#include "gantry/v1/generate_spec.pb.h"
#include "runspec/generate_limits.h"
#include "runspec/train_config.h"

namespace gantry {

inline constexpr int64_t kMaxGenerateBatch = 4096;
inline constexpr size_t kMaxGenerateNameChars = 64;
// The ranges of generate's numbers: gantry-worker generate's flags and the coordinator's
// check of a submission refuse what lies outside them with the same words.
inline constexpr IntRange kGenerateCount{1, kMaxGenerateSamples};
inline constexpr IntRange kGenerateWalkSteps{2, kMaxGenerateSamples};
inline constexpr IntRange kGenerateBatch{1, kMaxGenerateBatch};
inline constexpr IntRange kGenerateFrame{0, 1'000'000'000};
// A checkpoint named by its run step (generate, export).
inline constexpr IntRange kCheckpointStep{1, kMaxRunSteps};

// "A,B" of an interpolate walk: two decimal rows in [0, INT64_MAX], or INVALID_ARGUMENT
// "'TEXT': give two latent rows as A,B ..." quoting the text as typed (a row past INT64_MAX
// is refused, never wrapped).
absl::StatusOr<std::pair<int64_t, int64_t>> InterpolateEnds(const std::string& text);

// Each field on its own: source_job_id given, name of [A-Za-z0-9._-] (at most
// kMaxGenerateNameChars, not "." or ".."), count in [1, kMaxGenerateSamples], checkpoint
// >= 1, precision fp32 | bf16, batch in [1, kMaxGenerateBatch], interpolate "A,B" of
// rows in [0, kMaxGenerateSamples) (the seeded draw's, as the worker refuses) with steps in [2, kMaxGenerateSamples]
// (and no count), frame >= 0. INVALID_ARGUMENT naming the field ("generate.count: ...").
absl::Status CheckGenerateSpec(const v1::GenerateSpec& generate);

// Against the source run's resolved settings: an image model (dcgan) generates from
// latent vectors (count or a walk, no case_dir); a next-frame model (pix2pix on flow)
// from a case's frames (case_dir, no walk). INVALID_ARGUMENT naming the field and the fix.
absl::Status CheckGenerateFitsRun(const v1::GenerateSpec& generate, const TrainConfig& source,
                                  const std::string& source_job_id);

// RUN/generate-<name>: where a generate job writes.
std::string GenerateOutputFolder(const std::string& run_dir, const std::string& name);

}  // namespace gantry
