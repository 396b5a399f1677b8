#include "worker/flow/reference_step.h"

#include <algorithm>

#include "common/check.h"

namespace gantry::flow {
namespace {

template <bool kForce>
void CollideAll(float omega, BodyForce force, Populations* p) {
  float* planes[kQ];
  for (int i = 0; i < kQ; ++i) planes[i] = p->plane(i);
  const int64_t n = p->cells();
  // Vectorised like the fused loop, so the comparison in bench/lbm_bench.cc measures the
  // extra passes over memory, not a missing vectoriser.
#pragma GCC ivdep
  for (int64_t c = 0; c < n; ++c) {
    float f[kQ];
    for (int i = 0; i < kQ; ++i) f[i] = planes[i][c];
    CollideBgk<kForce>(f, omega, force);
    for (int i = 0; i < kQ; ++i) planes[i][c] = f[i];
  }
}

}  // namespace

ReferenceStepper::ReferenceStepper(const Domain& domain) : d_(domain) {
  CHECK(d_.nx >= 3 && d_.ny >= 3) << "grid " << d_.nx << "x" << d_.ny << " is too small";
  for (int y = 0; y < d_.ny; ++y) {
    for (int x = 0; x < d_.nx; ++x) {
      if (d_.IsSolid(x, y)) continue;
      for (int i = 1; i < kQ; ++i) {
        int sx = x - kCx[i], sy = y - kCy[i];
        if (sx < 0 || sx >= d_.nx) {
          if (d_.edges.x != XBoundary::kPeriodic) continue;  // the edge rules handle it
          sx = (sx + d_.nx) % d_.nx;
        }
        if (sy < 0 || sy >= d_.ny) {
          if (d_.edges.y == YBoundary::kWalls) continue;  // the wall fix-up handles it
          sy = (sy + d_.ny) % d_.ny;
        }
        if (d_.IsSolid(sx, sy)) solid_links_.push_back({static_cast<int64_t>(y) * d_.nx + x, i});
      }
    }
  }
}

void ReferenceStepper::Step(float omega, BodyForce force, const Populations& post, Populations* next) const {
  CHECK(&post != next) << "the reference step needs two arrays";
  const int nx = d_.nx, ny = d_.ny;
  // Pass 1: stream. Each plane shifted by (cx, cy), wrapping periodically; the cells
  // this gets wrong are fixed up below.
  for (int i = 0; i < kQ; ++i) {
    for (int y = 0; y < ny; ++y) {
      const int sy = (y - kCy[i] + ny) % ny;
      const float* src = post.plane(i) + static_cast<int64_t>(sy) * nx;
      float* dst = next->plane(i) + static_cast<int64_t>(y) * nx;
      const int cx = kCx[i];
      for (int x = std::max(cx, 0); x < nx + std::min(cx, 0); ++x) dst[x] = src[x - cx];
      if (cx == 1) dst[0] = src[nx - 1];
      if (cx == -1) dst[nx - 1] = src[0];
    }
  }
  // Walls: populations that would come from beyond a wall bounce back.
  if (d_.edges.y == YBoundary::kWalls) {
    for (int i = 0; i < kQ; ++i) {
      const int y = kCy[i] > 0 ? 0 : kCy[i] < 0 ? ny - 1 : -1;
      if (y < 0) continue;
      for (int x = 0; x < nx; ++x) next->at(i, x, y) = post.at(kOpposite[i], x, y);
    }
  }
  // Obstacle links bounce back; solid cells hold the rest populations (zeros, shifted).
  for (const Link& l : solid_links_) next->plane(l.i)[l.cell] = post.plane(kOpposite[l.i])[l.cell];
  for (int64_t c = 0; c < next->cells(); ++c) {
    if (!d_.solid.empty() && d_.solid[c]) {
      for (int i = 0; i < kQ; ++i) next->plane(i)[c] = 0.f;
    }
  }
  // Pass 2: the inlet and outflow columns.
  if (d_.edges.x != XBoundary::kPeriodic) {
    for (int y = 0; y < ny; ++y) {
      for (const int x : {0, nx - 1}) {
        if (d_.IsSolid(x, y)) continue;
        float f[kQ];
        PullEdgeCell(d_, post, x, y, f);
        for (int i = 0; i < kQ; ++i) next->at(i, x, y) = f[i];
      }
    }
  }
  // Pass 3: collide every cell in place (solid ones too, for a loop without branches),
  // then put the rest populations (zeros, shifted) back into the solid cells.
  if (force.active()) {
    CollideAll<true>(omega, force, next);
  } else {
    CollideAll<false>(omega, force, next);
  }
  for (int64_t c = 0; c < next->cells(); ++c) {
    if (!d_.solid.empty() && d_.solid[c]) {
      for (int i = 0; i < kQ; ++i) next->plane(i)[c] = 0.f;
    }
  }
}

}  // namespace gantry::flow
