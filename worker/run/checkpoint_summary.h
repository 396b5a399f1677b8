// `gantry-worker inspect-checkpoint PATH`: what a checkpoint holds, as JSON, after the
// same checks a resume makes of the file (magic, version, sizes, checksums, sections).
//
// "state_crc32" is a CRC-32 over the sections that make up the training state (position
// and noise stream, both networks, both optimizers, both loss scalers, shares), leaving
// out the timing-bearing ones (the rows, the epoch in progress, straggler rows). Two
// checkpoints with equal state_crc32 continue into the same training; an interrupted
// and resumed run's final checkpoint has the state_crc32 of the uninterrupted run's.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gantry {

// `path` is a checkpoint file (checked as a checkpoint), or a run folder: its newest
// usable checkpoint, chosen as `--resume RUN` chooses it (checked against the run's
// run.json too), with "skipped": the newer files passed over and why. Errors name the
// file and the fault (DATA_LOSS for damage, or when no checkpoint of the folder is
// usable: each file's fault), or say that the folder holds none.
absl::StatusOr<std::string> CheckpointSummaryJson(const std::string& path);

}  // namespace gantry
