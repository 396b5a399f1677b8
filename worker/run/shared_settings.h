// Agreeing across the ranks of a group before training: rank 0's settings become every
// rank's configuration, and a failure on any rank stops all of them together.
#pragma once

#include "absl/status/statusor.h"
#include "runspec/train_config.h"
#include "worker/comm/communicator.h"

namespace gantry {

struct SharedSettings {
  RawSettings raw;     // as rank 0 had them
  TrainConfig config;  // resolved from them, the same on every rank
};

// Rank 0 sends its settings (or its error) to every rank; returns the same settings and
// configuration on all ranks, or the same error on all ranks. Other ranks' `mine` is
// ignored.
absl::StatusOr<SharedSettings> ShareSettings(Communicator& comm, const absl::StatusOr<RawSettings>& mine,
                                             const CommOptions& options);

// True on every rank when every rank's `ok` is true.
absl::StatusOr<bool> AllRanksOk(Communicator& comm, bool ok, const CommOptions& options);

}  // namespace gantry
