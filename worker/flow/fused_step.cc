#include "worker/flow/fused_step.h"

#include "common/check.h"

namespace gantry::flow {
namespace {

// The row loop. src[i][x] is the post-collision population i at the upstream cell of
// (x, y); bb[i][x] the cell's own reflected population (opposite(i)); src_solid[i][x]
// whether the upstream cell is solid; here_solid[x] whether (x, y) is. Every pointer
// is valid over [x0, x1).
template <bool kForce, bool kNearSolid>
void StepRow(const float* const* src, const float* const* bb, const float* const* src_solid,
             const float* here_solid, float* const* dst, int x0, int x1, float omega, BodyForce force) {
  // Local copies of the pointers: the compiler keeps them in registers and knows the
  // stores below cannot move them.
  const float* s[kQ];
  const float* r[kQ];
  const float* m[kQ];
  float* o[kQ];
  for (int i = 0; i < kQ; ++i) {
    s[i] = src[i];
    r[i] = bb[i];
    m[i] = src_solid[i];
    o[i] = dst[i];
  }
#pragma GCC ivdep
  for (int x = x0; x < x1; ++x) {
    float f[kQ];
#pragma GCC unroll 9
    for (int i = 0; i < kQ; ++i) f[i] = s[i][x];
    if constexpr (kNearSolid) {
      // Both values are loaded unconditionally so the select stays branch-free.
#pragma GCC unroll 9
      for (int i = 1; i < kQ; ++i) {
        const float reflected = r[i][x];
        f[i] = m[i][x] != 0.f ? reflected : f[i];
      }
    }
    CollideBgk<kForce>(f, omega, force);
    if constexpr (kNearSolid) {
      const bool solid = here_solid[x] != 0.f;
#pragma GCC unroll 9
      for (int i = 0; i < kQ; ++i) f[i] = solid ? 0.f : f[i];
    }
#pragma GCC unroll 9
    for (int i = 0; i < kQ; ++i) o[i][x] = f[i];
  }
}

}  // namespace

FusedStepper::FusedStepper(const Domain& domain) : d_(domain) {
  CHECK(d_.nx >= 3 && d_.ny >= 3) << "grid " << d_.nx << "x" << d_.ny << " is too small";
  const int64_t cells = static_cast<int64_t>(d_.nx) * d_.ny;
  solid_.assign(cells + 2, 0.f);  // one spare float at each end: see solid_ in the header
  zero_row_.assign(d_.nx, 0.f);
  near_solid_.assign(d_.ny, 0);
  for (int y = 0; y < d_.ny; ++y) {
    for (int x = 0; x < d_.nx; ++x) {
      if (!d_.IsSolid(x, y)) continue;
      solid_[1 + static_cast<int64_t>(y) * d_.nx + x] = 1.f;
      // Rows y-1 .. y+1 see this cell (with the periodic wrap in y).
      for (int dy = -1; dy <= 1; ++dy) near_solid_[(y + dy + d_.ny) % d_.ny] = 1;
    }
  }
}

void FusedStepper::Step(float omega, BodyForce force, const Populations& post, Populations* next) const {
  CHECK(post.nx() == d_.nx && post.ny() == d_.ny && next->nx() == d_.nx && next->ny() == d_.ny);
  CHECK(&post != next) << "the fused step needs two arrays";
  if (force.active()) {
    StepImpl<true>(omega, force, post, next);
  } else {
    StepImpl<false>(omega, force, post, next);
  }
}

template <bool kForce>
void FusedStepper::StepImpl(float omega, BodyForce force, const Populations& post, Populations* next) const {
  const int nx = d_.nx, ny = d_.ny;
  const float* src[kQ];
  const float* bb[kQ];
  const float* src_solid[kQ];
  float* dst[kQ];
  for (int y = 0; y < ny; ++y) {
    const int64_t row = static_cast<int64_t>(y) * nx;
    for (int i = 0; i < kQ; ++i) {
      bb[i] = post.plane(kOpposite[i]) + row;
      dst[i] = next->plane(i) + row;
      int sy = y - kCy[i];
      if ((sy < 0 || sy >= ny) && d_.edges.y == YBoundary::kWalls) {
        src[i] = bb[i];  // beyond a wall: bounce back
        src_solid[i] = zero_row_.data();
        continue;
      }
      sy = (sy + ny) % ny;
      // Offsets by -cx stay inside the one allocation: planes 1..8 follow plane 0, and
      // the rest direction (plane 0) has cx = 0.
      src[i] = post.plane(i) + static_cast<int64_t>(sy) * nx - kCx[i];
      src_solid[i] = solid_.data() + 1 + static_cast<int64_t>(sy) * nx - kCx[i];
    }
    if (near_solid_[y]) {
      StepRow<kForce, true>(src, bb, src_solid, solid_.data() + 1 + row, dst, 1, nx - 1, omega, force);
    } else {
      StepRow<kForce, false>(src, bb, src_solid, solid_.data() + 1 + row, dst, 1, nx - 1, omega, force);
    }
    // The edge columns: inlet, outflow or periodic wrap, through the shared rules.
    for (const int x : {0, nx - 1}) {
      float f[kQ];
      if (d_.IsSolid(x, y)) {
        for (int i = 0; i < kQ; ++i) dst[i][x] = 0.f;
        continue;
      }
      PullEdgeCell(d_, post, x, y, f);
      CollideBgk<kForce>(f, omega, force);
      for (int i = 0; i < kQ; ++i) dst[i][x] = f[i];
    }
  }
}

}  // namespace gantry::flow
