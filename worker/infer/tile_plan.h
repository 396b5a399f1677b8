// Where the tiles of a field lie for tiled inference: a field larger than the model's
// input is cut into overlapping square tiles (map), whose outputs are blended back into
// one field (reduce, tile_blend.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct TileOrigin {
  int64_t y = 0;
  int64_t x = 0;
  bool operator==(const TileOrigin&) const = default;
};

struct TilePlan {
  int64_t height = 0;
  int64_t width = 0;
  int64_t tile = 0;      // side S of every tile
  int64_t overlap = 0;   // O: cells shared by neighbouring tiles (more at the last one)
  std::vector<int64_t> ys;  // row origins, ascending
  std::vector<int64_t> xs;  // column origins, ascending
  std::vector<TileOrigin> tiles;  // row-major over (ys, xs): tile k = (ys[k / xs.size()], xs[k % xs.size()])

  int64_t count() const { return static_cast<int64_t>(tiles.size()); }
};

// The origins along one axis of `length` cells: 0, S - O, 2 (S - O), ... while a tile
// still ends short of the edge, then one flush with it (length - S), so the last tile
// may overlap its neighbour by more than O. A single origin 0 when length == S.
std::vector<int64_t> AxisOrigins(int64_t length, int64_t tile, int64_t overlap);

// The plan of an height x width field. INVALID_ARGUMENT naming the fix when the tile is
// not positive or larger than the field, or the overlap is negative or not smaller than
// the tile.
absl::StatusOr<TilePlan> PlanTiles(int64_t height, int64_t width, int64_t tile, int64_t overlap);

}  // namespace gantry
