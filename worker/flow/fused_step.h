// The production LBM time step: stream (pull), boundary rules and BGK collision fused
// into one pass over memory. Each cell reads its nine incoming post-collision
// populations from the previous step's array, collides them in registers and writes nine
// populations to the other array (two-lattice pull scheme, structure of arrays), so a
// step moves 2 x 9 floats per cell and nothing else.
//
// Interior columns (1 .. nx-2) run a branch-free loop over x that the compiler
// vectorises: walls are resolved per row (the source pointer of a direction that
// crosses a wall is the cell's own opposite population), and obstacle bounce-back is a
// select that only rows near the obstacle use. Columns 0 and nx-1 (inlet, outflow or
// periodic wrap) go through the shared scalar rules of boundary.h.
#pragma once

#include <cstdint>
#include <vector>

#include "worker/flow/boundary.h"
#include "worker/flow/lattice.h"

namespace gantry::flow {

class FusedStepper {
 public:
  // `domain` must outlive the stepper; nx >= 3, ny >= 3.
  explicit FusedStepper(const Domain& domain);

  // One time step: reads `post` (post-collision populations of step t), writes step
  // t+1's post-collision populations to `next`. Solid cells get the rest state (zeros, shifted).
  void Step(float omega, BodyForce force, const Populations& post, Populations* next) const;

 private:
  template <bool kForce>
  void StepImpl(float omega, BodyForce force, const Populations& post, Populations* next) const;

  const Domain& d_;
  // The mask as 0/1 floats (for a vectorisable select), cell c at solid_[1 + c]: the
  // spare float at each end keeps the row pointers shifted by -cx inside the vector.
  std::vector<float> solid_;
  std::vector<float> zero_row_;     // a row of no solid cells (sources beyond a wall)
  std::vector<uint8_t> near_solid_; // per row: a solid cell in row y-1, y or y+1
};

}  // namespace gantry::flow
