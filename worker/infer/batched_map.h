// Batch inference of independent items across the ranks of a communicator, with the
// same result on any number of ranks: the generator's samples of `gantry-worker generate`.
//
// The items [0, n) are cut into groups of exactly `batch` items and the groups spread
// over the ranks in contiguous runs (AssignTiles with group_size = batch). Each rank
// calls the function once per group of its run, always with `batch` items (the last
// group padded with zero items), so every item is computed in the same call, at the same
// position, with the same shapes whatever the number of ranks; when the function
// computes each item independently of the others in its call (eval mode: BatchNorm on
// running statistics, no dropout) the result is bit-identical on 1, 2 or N ranks.
// Rank 0 then gathers the outputs in item order (ordered_gather.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/infer/tiled_map_reduce.h"

namespace gantry {

struct BatchedMapOptions {
  int64_t items = 0;       // n >= 1
  int64_t in_floats = 0;   // per item
  int64_t out_floats = 0;  // per item
  int64_t batch = 1;       // items per call of the function
  CommOptions comm;
};

// Collective: every rank passes the same `inputs` (items x in_floats floats). The
// function gets [batch x in_floats] floats and must fill [batch x out_floats] (the
// vector arrives sized so). Returns items x out_floats floats on rank 0 (empty
// elsewhere). A function error on any rank fails every rank (that rank's error there,
// ABORTED elsewhere); a collective's failure is returned as it came.
absl::StatusOr<std::vector<float>> BatchedMap(Communicator& comm, const float* inputs, const BatchedMapOptions& options,
                                              const TileFunction& fn);

}  // namespace gantry
