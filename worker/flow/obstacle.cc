#include "worker/flow/obstacle.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gantry::flow {

absl::StatusOr<ObstacleKind> ParseObstacleKind(const std::string& name) {
  if (name == "cylinder") return ObstacleKind::kCylinder;
  if (name == "square") return ObstacleKind::kSquare;
  return absl::InvalidArgumentError(absl::StrCat("obstacle '", name, "' is not known; use cylinder or square"));
}

const char* ObstacleKindName(ObstacleKind kind) { return kind == ObstacleKind::kSquare ? "square" : "cylinder"; }

std::vector<uint8_t> RasteriseObstacle(const Obstacle& o, int nx, int ny) {
  std::vector<uint8_t> mask(static_cast<size_t>(nx) * ny, 0);
  const double r = 0.5 * o.diameter;
  for (int y = 0; y < ny; ++y) {
    for (int x = 0; x < nx; ++x) {
      const double dx = x - o.cx, dy = y - o.cy;
      const bool inside = o.kind == ObstacleKind::kCylinder ? dx * dx + dy * dy < r * r
                                                             : std::abs(dx) < r && std::abs(dy) < r;
      mask[static_cast<size_t>(y) * nx + x] = inside ? 1 : 0;
    }
  }
  return mask;
}

}  // namespace gantry::flow
