// One checkpoint on every rank of a group: rank 0 reads it from the run's store and
// sends the file; every rank decodes the same bytes. Resume, rollout, generate and the
// pool use it, so every rank starts from the same state without reading the disk.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/checkpoint/training_state.h"
#include "worker/comm/communicator.h"

namespace gantry {

struct SharedCheckpoint {
  TrainingState state;
  std::string path;  // rank 0: the file it came from; empty elsewhere
};

// Rank 0 (the only one that needs `store`; null elsewhere) loads the checkpoint of run
// step `step` (0: the newest usable one, logging each newer one passed over with its
// fault) and sends it to every rank. Returns the same state, or the same error, on every
// rank; an error of the transport (DEADLINE_EXCEEDED, UNAVAILABLE) is never rank 0's own.
absl::StatusOr<SharedCheckpoint> ShareCheckpoint(Communicator& comm, const CheckpointStore* store,
                                                 const CheckpointExpectations& run, int64_t step,
                                                 const CommOptions& options);

}  // namespace gantry
