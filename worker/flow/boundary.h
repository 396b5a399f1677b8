// The edges of the domain and how a population crosses them, shared by the fused step
// and the reference step so the two apply the same rules.
//
// x: periodic, or a velocity inlet at x = 0 (uniform (U, 0): equilibrium populations at
//    the density of Zou/He's mass balance, see boundary.cc for why) and an outflow at
//    x = nx - 1 (zero gradient: the populations entering from the right are those of
//    column nx - 2, as in Latt's lbmFlowAroundCylinder).
// y: periodic, or no-slip walls half a cell outside rows 0 and ny - 1 (half-way
//    bounce-back), as for channel flow.
// Obstacle cells (solid mask) reflect with half-way bounce-back too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worker/flow/lattice.h"

namespace gantry::flow {

enum class XBoundary { kPeriodic, kInletOutflow };
enum class YBoundary { kPeriodic, kWalls };

struct Boundaries {
  XBoundary x = XBoundary::kInletOutflow;
  YBoundary y = YBoundary::kPeriodic;
  float inlet_ux = 0;  // the inlet velocity U for kInletOutflow
};

// What the grid is made of: its size, edges, and solid cells (nx*ny bytes, 1 = solid;
// empty for none). Solid cells must not lie on the inlet or outflow column.
struct Domain {
  int nx = 0, ny = 0;
  Boundaries edges;
  std::vector<uint8_t> solid;

  bool IsSolid(int x, int y) const { return !solid.empty() && solid[static_cast<size_t>(y) * nx + x]; }
};

// The pre-collision population i at fluid cell (x, y): post-collision population i of
// the upstream cell (x - cx_i, y - cy_i), or, when that cell is solid or beyond a wall,
// the reflected population opposite(i) of (x, y) itself. Returns 0 for a source beyond
// a non-periodic x edge (the inlet or outflow rule replaces it).
float PullPopulation(const Domain& d, const Populations& post, int i, int x, int y);

// Pre-collision populations of a cell in column 0 or nx - 1 with the inlet/outflow rules
// applied (plain PullPopulation for a periodic x). `x` must be 0 or nx - 1.
void PullEdgeCell(const Domain& d, const Populations& post, int x, int y, float f[kQ]);

}  // namespace gantry::flow
