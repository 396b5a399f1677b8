#include "worker/infer/tiled_map_reduce.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "worker/infer/ordered_gather.h"

namespace gantry {
namespace {

// This rank's tile outputs, max_count() slots of [out_channels, S, S] (unused slots 0).
absl::Status MapTiles(const TilePlan& plan, const TileAssignment& a, int rank, const float* field,
                      const TiledStepOptions& o, const TileFunction& fn, std::vector<float>& mine) {
  const int64_t s = plan.tile;
  const int64_t in_tile = o.in_channels * s * s;
  const int64_t out_tile = o.out_channels * s * s;
  std::vector<float> in(o.batch * in_tile);
  std::vector<float> out(o.batch * out_tile);
  for (int64_t first = a.begin(rank); first < a.end(rank); first += o.batch) {
    const int64_t n = std::min(o.batch, a.end(rank) - first);
    std::fill(in.begin(), in.end(), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      ExtractTile(field, o.in_channels, plan.height, plan.width, plan.tiles[first + i], s, in.data() + i * in_tile);
    }
    out.assign(out.size(), 0.0f);
    RETURN_IF_ERROR(fn(in, o.batch, out));
    if (static_cast<int64_t>(out.size()) != o.batch * out_tile) {
      return absl::InternalError(absl::StrCat("the tile function returned ", out.size(), " floats, expected ",
                                              o.batch * out_tile));
    }
    std::copy_n(out.data(), n * out_tile, mine.data() + (first - a.begin(rank)) * out_tile);
  }
  return absl::OkStatus();
}

}  // namespace

void ExtractTile(const float* field, int64_t channels, int64_t height, int64_t width, TileOrigin origin, int64_t tile,
                 float* out) {
  for (int64_t ch = 0; ch < channels; ++ch) {
    for (int64_t r = 0; r < tile; ++r) {
      std::copy_n(field + (ch * height + origin.y + r) * width + origin.x, tile, out + (ch * tile + r) * tile);
    }
  }
}

absl::StatusOr<std::vector<float>> TiledMapReduce(Communicator& comm, const TileBlender& blender,
                                                  const TileAssignment& assignment, const float* field,
                                                  const TiledStepOptions& options, const TileFunction& fn) {
  const TilePlan& plan = blender.plan();
  CHECK_EQ(assignment.tiles, plan.count());
  CHECK_EQ(assignment.ranks, comm.size());
  CHECK(options.batch >= 1);
  const int64_t out_tile = options.out_channels * plan.tile * plan.tile;
  const int64_t slots = assignment.max_count();
  std::vector<float> mine(slots * out_tile, 0.0f);
  const absl::Status mapped = MapTiles(plan, assignment, comm.rank(), field, options, fn, mine);
  ASSIGN_OR_RETURN(const std::vector<float> ordered,
                   GatherInItemOrder(comm, assignment, mapped, mine, out_tile, "tile", options.comm));
  std::vector<float> blended(options.out_channels * plan.height * plan.width);
  if (comm.rank() == 0) blender.Blend(ordered.data(), options.out_channels, blended.data());
  RETURN_IF_ERROR(comm.Broadcast(blended.data(), static_cast<int64_t>(blended.size() * sizeof(float)), 0, options.comm));
  return blended;
}

}  // namespace gantry
