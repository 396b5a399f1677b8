// One make-flow case from start to recorded frames: flow past an obstacle in a stream
// from the left (uniform velocity inlet), leaving on the right (outflow), periodic at
// the top and bottom. The initial state is the uniform stream plus a seeded random
// cross-stream perturbation (amplitude 1 % of U), which breaks the up-down symmetry so
// the wake starts shedding without waiting for round-off to grow.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "worker/flow/fields.h"
#include "worker/flow/flow_params.h"
#include "worker/flow/strouhal.h"

namespace gantry::flow {

struct FlowResult {
  std::vector<float> frames;  // [frames, 3, ny, nx]: ux, uy, vorticity (lattice units)
  std::vector<float> mask;    // [ny, nx]: 1 inside the obstacle
  std::vector<double> probe_uy;  // uy at the probe, one per frame
  StrouhalEstimate strouhal;
  std::vector<ChannelScale> normalisation;
  int64_t steps = 0;
  double step_seconds = 0;   // time in the LBM steps alone
  double total_seconds = 0;  // everything, frames and measurements included
  double mlups() const;      // million lattice-cell updates per second of step time
};

// Called now and then with the step reached, the total, and the MLUPS so far.
using FlowProgress = std::function<void(int64_t step, int64_t total, double mlups)>;

// Runs the case. `progress` (may be empty) is called about every `progress_seconds` of
// `clock` time. INVALID_ARGUMENT when the flow diverges (NaN) despite the checks, with
// the step and the fix.
absl::StatusOr<FlowResult> SimulateFlow(const FlowSetup& setup, const Clock& clock, const FlowProgress& progress,
                                        double progress_seconds);

}  // namespace gantry::flow
