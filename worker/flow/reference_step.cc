#include "worker/flow/reference_step.h"

#include "common/check.h"

namespace gantry::flow {

void ReferenceStep(const Domain& d, float omega, BodyForce force, const Populations& post, Populations* next) {
  CHECK(&post != next) << "the reference step needs two arrays";
  // Pass 1: stream.
  for (int y = 0; y < d.ny; ++y) {
    for (int x = 0; x < d.nx; ++x) {
      for (int i = 0; i < kQ; ++i) next->at(i, x, y) = d.IsSolid(x, y) ? kW[i] : PullPopulation(d, post, i, x, y);
    }
  }
  // Pass 2: the edge columns' inlet / outflow rules.
  for (int y = 0; y < d.ny; ++y) {
    for (const int x : {0, d.nx - 1}) {
      if (d.IsSolid(x, y)) continue;
      float f[kQ];
      PullEdgeCell(d, post, x, y, f);
      for (int i = 0; i < kQ; ++i) next->at(i, x, y) = f[i];
    }
  }
  // Pass 3: collide.
  for (int y = 0; y < d.ny; ++y) {
    for (int x = 0; x < d.nx; ++x) {
      if (d.IsSolid(x, y)) continue;
      float f[kQ];
      for (int i = 0; i < kQ; ++i) f[i] = next->at(i, x, y);
      if (force.active()) {
        CollideBgk<true>(f, omega, force);
      } else {
        CollideBgk<false>(f, omega, force);
      }
      for (int i = 0; i < kQ; ++i) next->at(i, x, y) = f[i];
    }
  }
}

}  // namespace gantry::flow
