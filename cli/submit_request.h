// What `gantry submit` sends: the run file's settings, then the flags over them, as a
// RunSpec, with the submission's world size, attempts and name; and what `gantry
// rollout` sends.
#pragma once

#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry::cli {

// A relative data-dir is made absolute against the current folder, as gantry-worker
// would read it here (the coordinator and the workers may run elsewhere). Errors name
// the run file or the setting.
absl::StatusOr<v1::SubmitJobRequest> BuildSubmitRequest(const SubmitArgs& args);

// A rollout submission (SubmitJobRequest.rollout, no spec). The case folder is made
// absolute as a data-dir is; every other check is the coordinator's.
v1::SubmitJobRequest BuildRolloutRequest(const RolloutArgs& args);

}  // namespace gantry::cli
