// Which rank computes which tiles: the tiles (in plan order) are cut into contiguous
// groups of `group_size`, and the groups into contiguous runs, one per rank, as even as
// possible (the first G mod N ranks get one group more). Any N works; with more ranks
// than groups the last ranks get none and only take part in the collectives.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

struct TileAssignment {
  int64_t tiles = 0;
  int64_t group_size = 1;
  int ranks = 1;
  std::vector<int64_t> rank_begin;  // ranks + 1 entries: rank r computes tiles [rank_begin[r], rank_begin[r + 1])

  int64_t groups() const { return (tiles + group_size - 1) / group_size; }
  int64_t begin(int rank) const { return rank_begin[rank]; }
  int64_t end(int rank) const { return rank_begin[rank + 1]; }
  int64_t count(int rank) const { return end(rank) - begin(rank); }
  int64_t max_count() const;  // the most tiles any rank computes
};

// tiles >= 0, group_size >= 1, ranks >= 1 (programmer invariants).
TileAssignment AssignTiles(int64_t tiles, int64_t group_size, int ranks);

}  // namespace gantry
