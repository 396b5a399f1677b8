// The reduce half of sharded inference: rank 0 collects what every rank computed for
// the items an assignment gave it (tile_assignment.h), laid out in item order.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/infer/tile_assignment.h"

namespace gantry {

// Collective. `mine` holds this rank's outputs: assignment.max_count() slots of
// `item_floats` floats, the first count(rank) of them used (every rank sends the same
// number of bytes). `mapped` is how computing them went on this rank: every rank learns
// whether all succeeded before any waits in the gather, so a failure on one rank fails
// the call on every rank (that rank's error there, ABORTED "a <item_name> failed on
// another rank" elsewhere). Returns, on rank 0, assignment.tiles * item_floats floats
// in item order; an empty vector elsewhere. A collective's failure is returned as it came.
absl::StatusOr<std::vector<float>> GatherInItemOrder(Communicator& comm, const TileAssignment& assignment,
                                                     const absl::Status& mapped, const std::vector<float>& mine,
                                                     int64_t item_floats, const char* item_name,
                                                     const CommOptions& options);

}  // namespace gantry
