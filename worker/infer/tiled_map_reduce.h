// One step of tiled "map-reduce" inference across the ranks of a communicator.
//
// map:    each rank cuts its tiles (tile_assignment.h) out of the input field and runs
//         the tile function on them, `batch` tiles per call;
// reduce: rank 0 gathers every rank's tile outputs, blends them in plan order
//         (tile_blend.h) and broadcasts the blended field to all ranks.
//
// The result does not depend on the number of ranks or on the grouping, provided the
// tile function computes each tile independently of the others in its call (eval mode:
// BatchNorm on running statistics, no dropout): every call gets exactly `batch` tiles
// (a rank's last call is padded with zero tiles) so kernels see one shape whatever the
// split, and the blend sums in tile order on rank 0 alone.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/infer/tile_assignment.h"
#include "worker/infer/tile_blend.h"

namespace gantry {

// Computes `batch` tiles: `in` is [batch, in_channels, S, S], `out` must be filled with
// [batch, out_channels, S, S] (it arrives sized so).
using TileFunction = std::function<absl::Status(const std::vector<float>& in, int64_t batch, std::vector<float>& out)>;

struct TiledStepOptions {
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t batch = 1;  // tiles per call of the tile function
  CommOptions comm;
};

// Collective: every rank calls it with the same `field` ([in_channels, H, W] of the
// blender's plan) and gets the blended output field ([out_channels, H, W]). A tile
// function error on any rank fails the step on every rank (that rank's error there, an
// ABORTED naming it elsewhere); a collective's failure is returned as it came.
absl::StatusOr<std::vector<float>> TiledMapReduce(Communicator& comm, const TileBlender& blender,
                                                  const TileAssignment& assignment, const float* field,
                                                  const TiledStepOptions& options, const TileFunction& fn);

// Copies tile `origin` of `field` ([channels, height, width]) to `out` ([channels, S, S]).
void ExtractTile(const float* field, int64_t channels, int64_t height, int64_t width, TileOrigin origin, int64_t tile,
                 float* out);

}  // namespace gantry
