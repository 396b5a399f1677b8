#include "worker/run/trained_run.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/checkpoint/network_state.h"
#include "worker/checkpoint/share_checkpoint.h"
#include "worker/models/model_registry.h"
#include "worker/run/recorded_run.h"

namespace gantry {
namespace {

// Rank 0: the recorded settings (out: the run folder) and what its checkpoints must match.
struct RootView {
  absl::StatusOr<RawSettings> settings = absl::UnknownError("not rank 0");
  absl::StatusOr<CheckpointExpectations> expected = absl::UnknownError("not rank 0");
};

RootView ReadOnRoot(const std::string& run_dir) {
  RootView view;
  absl::StatusOr<RecordedRun> recorded = ReadRecordedRun(run_dir);
  if (!recorded.ok()) {
    view.settings = recorded.status();
    return view;
  }
  recorded->settings["out"] = run_dir;
  view.expected = ExpectationsOf(*recorded);
  view.settings = view.expected.ok() ? absl::StatusOr<RawSettings>(recorded->settings) : view.expected.status();
  return view;
}

// A failure of the transport, never rank 0's own error (which ShareCheckpoint sends with
// its own code, and ShareSettings turns into INVALID_ARGUMENT).
bool TransportFailure(const absl::Status& s) { return absl::IsDeadlineExceeded(s) || absl::IsUnavailable(s); }

}  // namespace

std::string GeneratorWeightsName(const TrainedRun& run) {
  return run.generator_averaged ? "weight average (--g-ema)" : "trained";
}

absl::StatusOr<TrainedRun> OpenTrainedRun(Communicator& comm, const TrainedRunRequest& request,
                                          bool* collective_failed) {
  bool ignored = false;
  bool& failed = collective_failed != nullptr ? *collective_failed : ignored;
  failed = false;
  const bool root = comm.rank() == 0;
  const RootView view = root ? ReadOnRoot(request.run_dir) : RootView{};
  absl::StatusOr<SharedSettings> shared = ShareSettings(comm, view.settings, request.comm);
  if (!shared.ok()) {
    failed = !absl::IsInvalidArgument(shared.status());
    return shared.status();
  }
  TrainedRun run{.settings = *std::move(shared)};
  ASSIGN_OR_RETURN(run.model, MakeModel(run.settings.config, request.device));
  const CheckpointStore store(root ? (std::filesystem::path(request.run_dir) / "checkpoints").string() : "");
  absl::StatusOr<SharedCheckpoint> checkpoint =
      ShareCheckpoint(comm, root ? &store : nullptr, root ? *view.expected : CheckpointExpectations{},
                      request.checkpoint_step, request.comm);
  if (!checkpoint.ok()) {
    failed = TransportFailure(checkpoint.status());
    return absl::Status(checkpoint.status().code(), absl::StrCat("cannot ", request.purpose, " ", request.run_dir,
                                                                 ": ", checkpoint.status().message()));
  }
  // A --g-ema run's model is its generator average: what its samples and scores showed.
  const std::optional<NetworkState>& average = checkpoint->state.g_average;
  RETURN_IF_ERROR(LoadNetwork(average ? *average : checkpoint->state.g, "generator", run.model->g_params()));
  run.generator_averaged = average.has_value();
  RETURN_IF_ERROR(LoadNetwork(checkpoint->state.d, "discriminator", run.model->d_params()));
  run.position = checkpoint->state.position;
  run.checkpoint_path = checkpoint->path;
  return run;
}

}  // namespace gantry
