#include "worker/infer/tile_assignment.h"

#include <algorithm>

#include "common/check.h"

namespace gantry {

int64_t TileAssignment::max_count() const {
  int64_t most = 0;
  for (int r = 0; r < ranks; ++r) most = std::max(most, count(r));
  return most;
}

TileAssignment AssignTiles(int64_t tiles, int64_t group_size, int ranks) {
  CHECK(tiles >= 0 && group_size >= 1 && ranks >= 1) << "tiles " << tiles << " group " << group_size << " ranks " << ranks;
  TileAssignment a;
  a.tiles = tiles;
  a.group_size = group_size;
  a.ranks = ranks;
  const int64_t groups = a.groups();
  a.rank_begin.resize(ranks + 1);
  int64_t group = 0;
  for (int r = 0; r < ranks; ++r) {
    a.rank_begin[r] = std::min(tiles, group * group_size);
    group += groups / ranks + (r < groups % ranks ? 1 : 0);
  }
  a.rank_begin[ranks] = tiles;
  return a;
}

}  // namespace gantry
