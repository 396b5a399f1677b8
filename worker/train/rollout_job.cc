#include "worker/train/rollout_job.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "spec/rollout_spec_check.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_pairs.h"
#include "worker/infer/rollout.h"
#include "worker/models/model_registry.h"
#include "worker/train/checkpoint_store.h"
#include "worker/train/flow_strip.h"
#include "worker/train/resume.h"
#include "worker/train/rollout_plot.h"
#include "worker/train/shared_settings.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStripColumns = 8;

// G in inference mode (BatchNorm on running statistics, dropout off): each tile's
// output depends on that tile alone.
TileFunction GeneratorTiles(GanModel& model, int64_t s) {
  return [&model, s](const std::vector<float>& in, int64_t batch, std::vector<float>& out) -> absl::Status {
    Context ctx;
    ctx.training = false;
    SequentialCache cache;
    const Tensor y = model.generator().Forward(ctx, Tensor::FromVector(Shape{batch, kFlowConditionChannels, s, s}, in),
                                               &cache);
    if (y.numel() != static_cast<int64_t>(out.size())) {
      return absl::InternalError(absl::StrCat("--model ", model.name(), " generator gave ", y.shape().ToString(),
                                              " for tiles [", batch, ", 4, ", s, ", ", s, "]"));
    }
    std::copy_n(y.data(), y.numel(), out.begin());
    return absl::OkStatus();
  };
}

// Up to kStripColumns steps, evenly spaced, always the first and the last.
std::vector<int64_t> StripSteps(int64_t steps) {
  std::vector<int64_t> picked;
  const int64_t n = std::min(steps, kStripColumns);
  for (int64_t i = 0; i < n; ++i) picked.push_back(n == 1 ? steps : 1 + i * (steps - 1) / (n - 1));
  return picked;
}

absl::Status WriteOutputs(const std::string& out, const RolloutResult& r, const FlowCase& flow) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(out, ": cannot create the folder: ", ec.message()));
  RETURN_IF_ERROR(WriteFileAtomically(out + "/rollout.csv", RolloutCsv(r.rows)));
  RETURN_IF_ERROR(WriteFileAtomically(out + "/rollout.md", RolloutMarkdown(r.rows, r.summary)));
  std::vector<const float*> fields;
  const std::vector<int64_t> steps = StripSteps(static_cast<int64_t>(r.rows.size()));
  float limit = 0;
  for (int64_t s : steps) {
    for (float v : r.true_vorticity[s]) limit = std::max(limit, std::abs(v));
  }
  for (int64_t s : steps) fields.push_back(r.true_vorticity[s].data());
  for (int64_t s : steps) fields.push_back(r.predicted_vorticity[s].data());
  RETURN_IF_ERROR(WriteFieldStrip(out + "/strip.png", fields, 2, static_cast<int64_t>(steps.size()), flow.ny, flow.nx,
                                  limit > 0 ? limit : 1.0f));
  return WriteRolloutPlot(out + "/errors.png", r.rows, r.summary.threshold);
}

// A failed collective leaves the ranks in different places. ShareSettings turns rank 0's
// own error into INVALID_ARGUMENT on every rank; ShareNewestCheckpoint sends rank 0's
// error's code, which is never a transport's (timeouts, a lost peer).
bool TransportFailure(const absl::Status& s) {
  return absl::IsDeadlineExceeded(s) || absl::IsUnavailable(s);
}

}  // namespace

absl::Status RunRolloutJob(Communicator& comm, const RolloutRequest& request, RolloutJobEnd* end) {
  RolloutJobEnd ignored;
  RolloutJobEnd& e = end != nullptr ? *end : ignored;
  e = RolloutJobEnd{};
  const bool root = comm.rank() == 0;
  CommOptions opts;
  opts.timeout_seconds = 600;  // start-up: ranks may still be loading
  absl::StatusOr<RawSettings> settings = absl::UnknownError("not rank 0");
  absl::StatusOr<CheckpointExpectations> expected = absl::UnknownError("not rank 0");
  if (root) {
    settings = ResumeSettings(request.run_dir, {});
    expected = RecordedExpectations(request.run_dir);
    if (settings.ok() && !expected.ok()) settings = expected.status();
  }
  absl::StatusOr<SharedSettings> shared = ShareSettings(comm, settings, opts);
  if (!shared.ok()) {
    e.collective_failed = !absl::IsInvalidArgument(shared.status());
    return shared.status();
  }
  const TrainConfig& config = shared->config;
  const CheckpointStore store(root ? (fs::path(request.run_dir) / "checkpoints").string() : "");
  absl::StatusOr<TrainingState> state =
      ShareNewestCheckpoint(comm, root ? &store : nullptr, root ? *expected : CheckpointExpectations{}, opts);
  if (!state.ok()) {
    e.collective_failed = TransportFailure(state.status());
    return absl::Status(state.status().code(), absl::StrCat("cannot roll out ", request.run_dir, ": ",
                                                            state.status().message()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GanModel> model, MakeModel(config));
  const Shape rows = model->SampleShape();
  if (rows.rank() != 3 || rows[0] != kFlowRowChannels || rows[1] != rows[2]) {
    return absl::InvalidArgumentError(absl::StrCat(request.run_dir, " trained --model ", model->name(), " on rows ",
                                                   rows.ToString(), ", not a next-frame model of flow fields; roll out "
                                                   "a run of --model pix2pix --dataset flow"));
  }
  const int64_t s = rows[1];
  if (request.tile != 0 && request.tile != s) {
    return absl::InvalidArgumentError(absl::StrCat("--tile ", request.tile, ": the model of ", request.run_dir,
                                                   " takes tiles of its --image-size ", s, "; use --tile ", s));
  }
  FlatParameters& g = model->g_params();
  if (static_cast<int64_t>(state->g.params.size()) != g.params().numel() ||
      static_cast<int64_t>(state->g.buffers.size()) != g.buffers().numel()) {
    return absl::InternalError("the checkpoint's generator does not match the model its settings build");
  }
  g.params().CopyFrom(Tensor::FromVector(g.params().shape(), state->g.params));
  g.buffers().CopyFrom(Tensor::FromVector(g.buffers().shape(), state->g.buffers));

  absl::StatusOr<FlowCase> flow = LoadFlowCase(request.case_dir);
  absl::StatusOr<bool> all_loaded = AllRanksOk(comm, flow.ok(), opts);
  if (!all_loaded.ok()) {
    e.collective_failed = true;
    return all_loaded.status();
  }
  if (!flow.ok()) return flow.status();
  if (!*all_loaded) return absl::AbortedError("loading the case failed on another rank (see its output)");
  ASSIGN_OR_RETURN(const BlendMode blend, ParseBlendMode(request.blend));
  RolloutOptions o{.start_frame = request.start_frame,
                   .steps = request.steps,
                   .horizon = config.pix2pix.horizon,
                   .tile = s,
                   .overlap = request.overlap >= 0 ? request.overlap : s / 4,
                   .blend = blend,
                   .group_size = request.group_size,
                   .batch = request.batch,
                   .threshold = 0.95,
                   .comm = CommOptions{.timeout_seconds = config.comm_timeout_seconds},
                   .should_stop = request.should_stop,
                   .on_step = request.on_step};
  e.stage = RolloutStage::kRollingOut;
  ASSIGN_OR_RETURN(RolloutResult r, RunRollout(comm, *flow, o, GeneratorTiles(*model, s)));
  e.stage = RolloutStage::kWriting;
  if (!root) return absl::OkStatus();
  r.summary.run = request.run_dir;
  r.summary.tiling = absl::StrFormat("tile %d, overlap %d, %s blend, %d tiles per step in groups of %d, %d per call", s,
                                     o.overlap, BlendModeName(blend), r.tiles, o.group_size, o.batch);
  r.summary.tiles_per_second = r.map_reduce_seconds > 0 ? r.tiles * request.steps / r.map_reduce_seconds : 0;
  e.out = request.out.empty() ? RolloutOutputFolder(request.run_dir, request.case_dir) : request.out;
  RETURN_IF_ERROR(WriteOutputs(e.out, r, *flow));
  spdlog::info("rollout of {} over {} steps written to {}", request.run_dir, request.steps, e.out);
  return absl::OkStatus();
}

}  // namespace gantry
