// Resuming a run folder: `gantry-worker train --resume RUN`, and what a worker pool
// does with a job that comes back to the queue. RunTrainJob (train_job.h) does all of
// the following when asked to resume; the parts are here for callers that need them
// one by one. On every rank of the group:
//
//   1. Rank 0: ResumeSettings(RUN, overrides) gives the run's own settings (from
//      RUN/run.json, recorded_run.h). Share and resolve them as a new run's settings
//      are shared, so every rank holds the same TrainConfig (whose `out` is RUN).
//   2. Rank 0: RunFolder::Open(RUN). Every rank: load the data.
//   3. Every rank: ShareCheckpoint(...) (share_checkpoint.h) gives the newest usable
//      checkpoint's state on every rank, or the same error everywhere: NOT_FOUND when
//      RUN has no checkpoint (start the run again instead).
//   4. If RunFinished(state, config) the run is complete: nothing to train. Else
//      Trainer(...).Run(&state) continues it; the result is bit-identical to the run
//      that was never interrupted when the group has the same number of ranks.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runspec/resume_rules.h"
#include "runspec/train_config.h"
#include "worker/checkpoint/checkpoint_match.h"
#include "worker/checkpoint/training_state.h"

namespace gantry {

// The settings that may be given with --resume (runspec/resume_rules.h): the free ones,
// which change where things are found, how often the run reports or checkpoints, and
// how long it waits, never what it computes; and --epochs, which may grow.
const std::vector<std::string>& ResumeOverridableSettings();

// The settings recorded in RUN/run.json, with `overrides` applied and `out` set to
// `run_dir`. An override that changes any other setting (compared by resolved value, so
// repeating the recorded value or its default is no change), or fewer --epochs, is
// INVALID_ARGUMENT naming every such flag with both values. Otherwise errors as
// ReadRecordedRun.
absl::StatusOr<RawSettings> ResumeSettings(const std::string& run_dir, const RawSettings& overrides);

// Checks the settings a resumed run is about to use (`in_use`: run.json's with the
// command line's) against the record its checkpoint `checkpoint` carries (the truth:
// run.json can be edited by hand). A recorded setting that differs, or fewer --epochs,
// is INVALID_ARGUMENT naming the setting, both values and the fix. Returns the
// extendable settings that grew (more --epochs), for RecordResumeChanges.
absl::StatusOr<std::vector<SettingChange>> CheckSettingsRecord(const RawSettings& record, const RawSettings& in_use,
                                                               const std::string& checkpoint);

// Writes the settings that grew on resume into RUN/run.json ("settings", "config" and a
// "resume_changes" list with the time and both values) and log.txt (one line each).
absl::Status RecordResumeChanges(const std::string& run_dir, const std::vector<SettingChange>& changes);

// What `--resume RUN` (without a --data-dir override) asks of a checkpoint: the run's
// settings and training-image count as RUN/run.json records them (ReadRecordedRun, then
// ExpectationsOf).
absl::StatusOr<CheckpointExpectations> RecordedExpectations(const std::string& run_dir);

// Whether the state is the end of the run: the last batch size has no epoch or step left.
bool RunFinished(const TrainingState& state, const TrainConfig& config);

}  // namespace gantry
