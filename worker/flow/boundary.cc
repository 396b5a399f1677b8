#include "worker/flow/boundary.h"

namespace gantry::flow {

float PullPopulation(const Domain& d, const Populations& post, int i, int x, int y) {
  int sx = x - kCx[i];
  int sy = y - kCy[i];
  if (sx < 0 || sx >= d.nx) {
    if (d.edges.x != XBoundary::kPeriodic) return 0.f;
    sx = (sx + d.nx) % d.nx;
  }
  if (sy < 0 || sy >= d.ny) {
    if (d.edges.y == YBoundary::kWalls) return post.at(kOpposite[i], x, y);
    sy = (sy + d.ny) % d.ny;
  }
  if (d.IsSolid(sx, sy)) return post.at(kOpposite[i], x, y);
  return post.at(i, sx, sy);
}

void PullEdgeCell(const Domain& d, const Populations& post, int x, int y, float f[kQ]) {
  for (int i = 0; i < kQ; ++i) f[i] = PullPopulation(d, post, i, x, y);
  if (d.edges.x == XBoundary::kPeriodic) return;
  if (x == 0) {
    // Velocity inlet: the density from Zou/He's mass balance (the six known
    // populations and the prescribed U), then the whole cell set to equilibrium. Full
    // Zou/He (bounce-back of the non-equilibrium part into the three unknowns) blew up
    // at this inlet within a thousand steps once the obstacle's start-up pressure
    // waves arrived (tau 0.512 - 0.53, U 0.05 - 0.1); the equilibrium inlet damps them.
    const float ux = d.edges.inlet_ux;
    // (Shifted populations: the weights of the six known ones sum to 1.)
    const float rho = (1.f + f[0] + f[2] + f[4] + 2.f * (f[3] + f[6] + f[7])) / (1.f - ux);
    Equilibrium(rho, ux, 0.f, f);
  } else {
    // Outflow: the populations entering from beyond the right edge (cx = -1) are those
    // that enter column nx - 2 at this step (zero gradient in x).
    for (int i = 0; i < kQ; ++i) {
      if (kCx[i] == -1) f[i] = PullPopulation(d, post, i, x - 1, y);
    }
  }
}

}  // namespace gantry::flow
