// The straightforward LBM time step, in separate passes over memory, as a textbook code
// writes it: stream (each direction's plane shifted by its velocity, row by row, then
// bounce-back fix-ups at walls and obstacle links), the edge columns' inlet and outflow
// rules, then BGK collision of every cell in place. Same physics as FusedStepper; the
// populations cross memory three times per step instead of once.
//
// Kept in the project only as the reference that the fused step is tested against
// (tests/flow) and measured against (bench/lbm_bench.cc); the generator never uses it.
#pragma once

#include <cstdint>
#include <vector>

#include "worker/flow/boundary.h"
#include "worker/flow/lattice.h"

namespace gantry::flow {

class ReferenceStepper {
 public:
  // `domain` must outlive the stepper; nx >= 3, ny >= 3.
  explicit ReferenceStepper(const Domain& domain);

  // Reads `post` (post-collision populations of step t), writes step t+1's to `next`.
  void Step(float omega, BodyForce force, const Populations& post, Populations* next) const;

 private:
  struct Link {
    int64_t cell;  // a fluid cell
    int i;         // whose upstream neighbour along direction i is solid
  };
  const Domain& d_;
  std::vector<Link> solid_links_;
};

}  // namespace gantry::flow
