// Opening a trained run for inference: the one way rollout, generate, export and the
// pool's jobs of those kinds get a trained model. Collective over the group:
//   1. rank 0 reads RUN/run.json once (recorded_run.h) and the ranks share its settings
//      (shared_settings.h), so every rank resolves the same configuration;
//   2. every rank builds the model from the registry (model_registry.h);
//   3. rank 0 loads the checkpoint asked for (the newest usable one by default) and
//      sends it (share_checkpoint.h);
//   4. every rank loads both networks from it: the generator's weight average in place
//      of the generator where the run kept one (--g-ema), as its samples and scores did.
// A bad request fails alike on every rank; `collective_failed` says when an agreement
// itself failed (a rank died or hung), leaving the ranks out of step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/checkpoint/training_state.h"
#include "worker/comm/communicator.h"
#include "worker/models/gan_model.h"
#include "worker/run/shared_settings.h"

namespace gantry {

struct TrainedRunRequest {
  std::string run_dir;          // a run folder with run.json and checkpoints (rank 0 reads it)
  int64_t checkpoint_step = 0;  // the run step of the checkpoint to load; 0: the newest usable
  Device device = Device::kCpu; // where the model's buffers live
  std::string purpose = "use";  // in messages: "cannot <purpose> RUN: ..."
  CommOptions comm;             // bound on each agreement (ranks may still be starting)
};

struct TrainedRun {
  SharedSettings settings;          // as run.json records them; config.out is the run folder
  std::unique_ptr<GanModel> model;  // both networks hold the checkpoint's values
  SweepPosition position;           // where the run stood at the checkpoint
  bool generator_averaged = false;  // the generator holds the run's weight average (--g-ema)
  std::string checkpoint_path;      // rank 0: the file loaded; empty elsewhere
};

// Which weights the run's generator holds, as generate.json and an exported file's
// metadata name them: "trained", or "weight average (--g-ema)".
std::string GeneratorWeightsName(const TrainedRun& run);

// The trained run of `request`. Errors: the settings' (INVALID_ARGUMENT, naming run.json
// and the fix), or the checkpoint's (NOT_FOUND: none; DATA_LOSS: none usable; each with
// "cannot <purpose> RUN: "), the same on every rank unless `collective_failed` is set.
absl::StatusOr<TrainedRun> OpenTrainedRun(Communicator& comm, const TrainedRunRequest& request,
                                          bool* collective_failed = nullptr);

}  // namespace gantry
