// `gantry-worker rollout`: a trained next-frame model (a run folder's newest usable
// checkpoint) rolled out over a flow case with tiled map-reduce inference across the
// ranks of the process group (worker/rollout/rollout.h), and its report written.
#pragma once

#include <cstdint>
#include <functional>
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
  int64_t report_every = 1; // --report-every: rollout.csv/.md rows of every Kth step and the last
  std::string out;          // --out; empty: RUN/rollout-<case folder name> (RolloutOutputFolder)
  // Whether `out` is this job's own folder (a pool's rollout job: RUN/rollout-<case>-<job
  // id>, where an earlier attempt may have left files and the job's log.txt): its files
  // are replaced. Otherwise `out` must be new or an empty folder (common/output_folder.h).
  bool own_folder = false;
  // This rank's wish to stop (a pool's cancel or SIGTERM): when set, on every rank, the
  // ranks agree before each step, and stop together with CANCELLED. Unset: never stops.
  std::function<bool()> should_stop;
  // Rank 0, after each step: the step (1-based) and the tiles per second so far (a pool's
  // progress).
  std::function<void(int64_t step, double tiles_per_second)> on_step;
};

// Where a failed rollout stopped, for a caller that goes on afterwards (the pool).
enum class RolloutStage {
  kPreparing,   // refused or failed before rolling out: every rank has the same error,
                // unless collective_failed
  kRollingOut,  // during the steps' collectives: the ranks may be out of step
  kWriting,     // rank 0 writing the outputs, after every collective
};

struct RolloutJobEnd {
  RolloutStage stage = RolloutStage::kPreparing;
  bool collective_failed = false;  // a collective itself failed: the ranks may be out of step
  std::string out;                 // rank 0: the output folder
};

// Collective. Rank 0 writes OUT/rollout.csv, OUT/rollout.md, OUT/strip.png (true
// vorticity above, predicted below, at up to 8 steps) and OUT/errors.png (relative L2
// and vorticity correlation per step, rollout_plot.h); INVALID_ARGUMENT (exit 2) for a
// bad request or input, naming the fix (a number out of runspec/rollout_spec_check.h's
// ranges, an OUT that holds files, tiles that would not fit in memory); CANCELLED when
// should_stop stopped it. `end` (optional) says how far it got.
absl::Status RunRolloutJob(Communicator& comm, const RolloutRequest& request, RolloutJobEnd* end = nullptr);

}  // namespace gantry
