// A rollout of a next-frame model over a flow case: start from a true frame, predict
// the next one with tiled map-reduce inference across the ranks, feed the prediction
// back, and measure every step against the simulator's frames.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "worker/comm/communicator.h"
#include "worker/data/flow_case.h"
#include "worker/infer/tile_blend.h"
#include "worker/infer/tiled_map_reduce.h"
#include "worker/rollout/rollout_report.h"

namespace gantry {

struct RolloutOptions {
  int64_t start_frame = 0;
  int64_t steps = 1;        // model steps; each advances `horizon` frames
  int64_t horizon = 1;
  int64_t tile = 0;         // 0: the whole field is one tile (it must be square then)
  int64_t overlap = 0;
  BlendMode blend = BlendMode::kGaussian;
  int64_t group_size = 1;   // tiles per group (tile_assignment.h)
  int64_t batch = 1;        // tiles per call of the tile function
  double threshold = 0.95;  // of the vorticity correlation
  CommOptions comm;
  // This rank's wish to stop. Set on every rank or on none: the ranks then agree before
  // each step (a one-float all-reduce) and stop together.
  std::function<bool()> should_stop;
  // Rank 0, after each step: the step (1-based) and the tiles per second so far.
  std::function<void(int64_t step, double tiles_per_second)> on_step;
  // Times the map-reduce (tiles per second); must outlive the call.
  const Clock* clock = &Clock::Real();
};

struct RolloutResult {
  std::vector<RolloutStepRow> rows;  // rank 0 only (others: empty)
  RolloutSummary summary;            // rank 0 only: filled but for run, tiling text and speed
  // Vorticity (physical) of the start frame and of every predicted and true step, for
  // the PNG strip: predicted[s] and truth[s] are step s + 1.
  std::vector<std::vector<float>> predicted_vorticity;
  std::vector<std::vector<float>> true_vorticity;
  int64_t tiles = 0;           // tiles per step
  double map_reduce_seconds = 0;  // wall time in TiledMapReduce, all steps (this rank)
};

// Collective over `comm`. INVALID_ARGUMENT naming the fix when the start frame plus
// steps x horizon runs past the case's frames, or the tiling does not fit the field
// (tile_plan.h). The Strouhal numbers need flow.json's diameter, u_lattice, every and
// probe; without them (or with too short a rollout) summary.strouhal_note says why.
// CANCELLED ("stopped before rollout step N") when should_stop asked for it.
absl::StatusOr<RolloutResult> RunRollout(Communicator& comm, const FlowCase& flow, const RolloutOptions& options,
                                         const TileFunction& model);

}  // namespace gantry
