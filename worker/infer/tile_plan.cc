#include "worker/infer/tile_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

std::vector<int64_t> AxisOrigins(int64_t length, int64_t tile, int64_t overlap) {
  const int64_t stride = tile - overlap;
  std::vector<int64_t> origins;
  for (int64_t p = 0; p + tile < length; p += stride) origins.push_back(p);
  origins.push_back(length - tile);  // flush with the far edge
  return origins;
}

absl::StatusOr<TilePlan> PlanTiles(int64_t height, int64_t width, int64_t tile, int64_t overlap) {
  if (tile < 1) return absl::InvalidArgumentError(absl::StrCat("--tile ", tile, ": must be positive"));
  if (tile > height || tile > width) {
    return absl::InvalidArgumentError(absl::StrCat("--tile ", tile, " is larger than the ", height, "x", width,
                                                   " field; use --tile <= ", std::min(height, width),
                                                   " (and the size the model was trained on)"));
  }
  if (overlap < 0 || overlap >= tile) {
    return absl::InvalidArgumentError(absl::StrCat("--overlap ", overlap, " must be in [0, --tile ", tile,
                                                   "); try --overlap ", tile / 4));
  }
  TilePlan plan;
  plan.height = height;
  plan.width = width;
  plan.tile = tile;
  plan.overlap = overlap;
  plan.ys = AxisOrigins(height, tile, overlap);
  plan.xs = AxisOrigins(width, tile, overlap);
  for (int64_t y : plan.ys) {
    for (int64_t x : plan.xs) plan.tiles.push_back({y, x});
  }
  return plan;
}

}  // namespace gantry
