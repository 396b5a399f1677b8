// The straightforward LBM time step, in separate passes: stream every population of
// every cell (with the generic PullPopulation rule, branches and all), apply the inlet
// and outflow rules to the edge columns, then collide every cell in place. Same physics
// as FusedStepper, three passes over memory instead of one.
//
// Kept in the project only as the reference that the fused step is tested against
// (tests/flow) and measured against (bench/lbm_bench.cc); the generator never uses it.
#pragma once

#include "worker/flow/boundary.h"
#include "worker/flow/lattice.h"

namespace gantry::flow {

// Reads `post` (post-collision populations of step t), writes step t+1's to `next`.
void ReferenceStep(const Domain& domain, float omega, BodyForce force, const Populations& post, Populations* next);

}  // namespace gantry::flow
