// What a run folder's run.json records, read once: the settings the run was started
// with and the number of images it trained on. `gantry-worker train --resume`,
// inspect-checkpoint and every consumer of a trained run (rollout, generate, export)
// start here.
//
// run.json is read as a bounded regular file (at most 1 MiB): a FIFO or device put in
// its place is refused at once instead of hanging the caller, and a damaged or hostile
// file cannot fill memory.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runspec/train_config.h"
#include "worker/checkpoint/checkpoint_match.h"

namespace gantry {

// The most bytes a run.json may hold: gantry writes a few KB (settings, config, host).
inline constexpr size_t kMaxRunJsonBytes = 1 << 20;

struct RecordedRun {
  std::string run_dir;
  // The "settings" object (name -> value as given; `out` is where the run was started,
  // which may be a relative path or have moved since), with the defaults of older gantry
  // versions filled in where today's differ (a run folder says what it trained, whatever
  // today's default is).
  RawSettings settings;
  // config.train_images: the images the sampler permuted; 0 when run.json lacks it
  // (then its checkpoints cannot be matched: ExpectationsOf refuses).
  int64_t train_images = 0;
};

// NOT_FOUND when `run_dir` is not a folder or holds no run.json; INVALID_ARGUMENT when
// run.json is unreadable, not a regular file, over 1 MiB, not JSON, or holds no
// settings (a run from before checkpoints). Messages name the file and the fix.
absl::StatusOr<RecordedRun> ReadRecordedRun(const std::string& run_dir);

// What a checkpoint of the recorded run must match (checkpoint_match.h). INVALID_ARGUMENT
// when the settings no longer resolve or run.json lacks the image count.
absl::StatusOr<CheckpointExpectations> ExpectationsOf(const RecordedRun& run);

}  // namespace gantry
