// The obstacle in the stream: a cylinder (circle) or a square of side D, rasterised onto
// cell centres at integer coordinates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry::flow {

enum class ObstacleKind { kCylinder, kSquare };

struct Obstacle {
  ObstacleKind kind = ObstacleKind::kCylinder;
  double cx = 0, cy = 0;  // centre, in cells
  double diameter = 0;    // cylinder diameter or square side, in cells
};

// "cylinder" | "square"; anything else is INVALID_ARGUMENT naming the choices.
absl::StatusOr<ObstacleKind> ParseObstacleKind(const std::string& name);
const char* ObstacleKindName(ObstacleKind kind);

// nx*ny bytes, row-major (y * nx + x): 1 for cells whose centre lies strictly inside
// the obstacle. With half-way bounce-back the wall sits half a cell outside the solid
// cells, so D = 8 about an integer centre gives 7 solid cells and a wall 8 cells across.
std::vector<uint8_t> RasteriseObstacle(const Obstacle& obstacle, int nx, int ny);

}  // namespace gantry::flow
