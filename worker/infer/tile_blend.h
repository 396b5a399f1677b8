// The reduce step of tiled inference: tile outputs blended into one field.
//
// out(p) = sum_k w_k(p) v_k(p) / sum_k w_k(p) over the tiles k covering pixel p, summed
// in double in tile order, so the result depends only on the plan, the mode and the tile
// outputs (never on which rank computed a tile), and a field whose tiles all give the
// constant c blends back to exactly c (c * sum w / sum w is within a few double ulps of
// c, which rounds to the float c).
//   gaussian: w = g(y) g(x), g a Gaussian of sigma 0.125 S centred on the tile (as
//             MONAI's sliding-window default), floored at 1e-3 so every pixel counts;
//   linear:   a tent, highest at the tile centre, positive at its edges;
//   none:     each pixel is taken from the one tile whose interior owns it (the seams are
//             the middles of the overlaps); no blending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/infer/tile_plan.h"

namespace gantry {

enum class BlendMode { kGaussian, kLinear, kNone };

// "gaussian" | "linear" | "none"; INVALID_ARGUMENT naming --blend otherwise.
absl::StatusOr<BlendMode> ParseBlendMode(const std::string& name);
std::string BlendModeName(BlendMode mode);

class TileBlender {
 public:
  TileBlender(const TilePlan& plan, BlendMode mode);

  const TilePlan& plan() const { return plan_; }
  // Tile k's weight at (r, c) of the tile, 0 <= r, c < S.
  float Weight(int64_t k, int64_t r, int64_t c) const;
  // The summed weight of every field pixel (height * width), for coverage checks.
  const std::vector<double>& coverage() const { return coverage_; }

  // Blends `tiles` (count() tiles in plan order, each [channels, S, S], contiguous) into
  // `field` ([channels, height, width]).
  void Blend(const float* tiles, int64_t channels, float* field) const;

 private:
  TilePlan plan_;
  BlendMode mode_;
  std::vector<float> window_;        // S: the 1-D profile of gaussian/linear
  std::vector<int64_t> own_y_, own_x_;  // none: per field row/column, the owning origin's index
  std::vector<double> coverage_;
};

// Which pixels lie within `band` cells of a seam: an edge of a tile that is not on the
// field's border. 1 in the band, 0 elsewhere (height * width), for comparing the error
// near seams with the error in tile interiors.
std::vector<uint8_t> SeamBandMask(const TilePlan& plan, int64_t band);

}  // namespace gantry
