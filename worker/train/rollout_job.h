// `gantry-worker rollout`: a trained next-frame model (a run folder's newest usable
// checkpoint) rolled out over a flow case with tiled map-reduce inference across the
// ranks of the process group (worker/infer/rollout.h), and its report written.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"

namespace gantry {

struct RolloutRequest {
  std::string run_dir;      // --run: a run folder with run.json and checkpoints
  std::string case_dir;     // --case: a flow case folder (make-flow)
  int64_t steps = 0;        // --steps: model steps to roll out
  int64_t start_frame = 0;  // --start-frame
  int64_t tile = 0;         // --tile; 0: the model's --image-size
  int64_t overlap = -1;     // --overlap; -1: a quarter of the tile
  std::string blend = "gaussian";
  int64_t group_size = 1;   // --group: tiles per group
  int64_t batch = 4;        // --tile-batch: tiles per generator call
  std::string out;          // --out; empty: RUN/rollout-<case folder name>
};

// Collective. Rank 0 writes OUT/rollout.csv, OUT/rollout.md and OUT/strip.png (true
// vorticity above, predicted below, at up to 8 steps); INVALID_ARGUMENT (exit 2) for a
// bad request or input, naming the fix.
absl::Status RunRolloutJob(Communicator& comm, const RolloutRequest& request);

}  // namespace gantry
