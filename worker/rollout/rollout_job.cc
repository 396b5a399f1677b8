#include "worker/rollout/rollout_job.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/machine_memory.h"
#include "common/output_folder.h"
#include "common/status_macros.h"
#include "runspec/memory_estimate.h"
#include "runspec/rollout_spec_check.h"
#include "spdlog/spdlog.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_pairs.h"
#include "worker/monitor/flow_strip.h"
#include "worker/rollout/rollout.h"
#include "worker/rollout/rollout_plot.h"
#include "worker/run/shared_settings.h"
#include "worker/run/trained_run.h"

namespace gantry {
namespace {

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

// `own_folder` (a pool's job folder, where an earlier attempt may have left files): they
// are replaced. Otherwise the first file claims the folder, created without replacing, so
// of two rollouts racing to one --out (both found it free) one writes and the other
// stops here, naming it.
absl::Status WriteOutputs(const std::string& out, const RolloutResult& r, const FlowCase& flow, bool own_folder,
                          int64_t report_every) {
  RETURN_IF_ERROR(CreateOutputFolder("--out", out));
  const std::string csv = out + "/rollout.csv";
  const std::string rows = RolloutCsv(r.rows, report_every);
  if (own_folder) {
    RETURN_IF_ERROR(WriteFileAtomically(csv, rows));
  } else if (absl::Status s = CreateFileAtomically(csv, rows); !s.ok()) {
    if (!absl::IsAlreadyExists(s)) return s;
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, ": another writer filled it meanwhile (",
                                                   s.message(), "); rollout never writes over files: give a new "
                                                   "folder"));
  }
  RETURN_IF_ERROR(WriteFileAtomically(out + "/rollout.md", RolloutMarkdown(r.rows, r.summary, report_every)));
  RETURN_IF_ERROR(WriteFileAtomically(out + "/rollout.json", RolloutSummaryJson(r.rows, r.summary)));
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

// The trained model behind a rollout: a next-frame model of flow fields whose tiles
// are the --tile asked for.
absl::Status CheckNextFrameModel(const GanModel& model, const RolloutRequest& request) {
  const Shape rows = model.SampleShape();
  if (rows.rank() != 3 || !IsFlowRowShape(rows[0], rows[1], rows[2])) {
    return absl::InvalidArgumentError(absl::StrCat(request.run_dir, " trained --model ", model.name(), " on rows ",
                                                   rows.ToString(), ", not a next-frame model of flow fields; roll out "
                                                   "a run of --model pix2pix --dataset flow"));
  }
  if (request.tile != 0 && request.tile != rows[1]) {
    return absl::InvalidArgumentError(absl::StrCat("--tile ", request.tile, ": the model of ", request.run_dir,
                                                   " takes tiles of its --image-size ", rows[1], "; use --tile ",
                                                   rows[1]));
  }
  return absl::OkStatus();
}

// The case on every rank, or the same error everywhere (`failed`: the agreement itself
// failed). `precheck` is this rank's verdict so far (its memory), agreed on with the load.
absl::StatusOr<FlowCase> LoadCaseOnEveryRank(Communicator& comm, const std::string& case_dir,
                                             const absl::Status& precheck, const CommOptions& opts, bool& failed) {
  absl::StatusOr<FlowCase> flow = precheck.ok() ? LoadFlowCase(case_dir) : absl::StatusOr<FlowCase>(precheck);
  absl::StatusOr<bool> all_loaded = AllRanksOk(comm, flow.ok(), opts);
  if (!all_loaded.ok()) {
    failed = true;
    return all_loaded.status();
  }
  if (!flow.ok()) return flow.status();
  if (!*all_loaded) return absl::AbortedError("loading the case failed on another rank (see its output)");
  return flow;
}

RolloutOptions OptionsFor(const RolloutRequest& request, const TrainConfig& config, int64_t tile, BlendMode blend) {
  return RolloutOptions{.start_frame = request.start_frame,
                        .steps = request.steps,
                        .horizon = config.pix2pix.horizon,
                        .tile = tile,
                        .overlap = request.overlap >= 0 ? request.overlap : tile / 4,
                        .blend = blend,
                        .group_size = request.group_size,
                        .batch = request.batch,
                        .threshold = 0.95,
                        .comm = CommOptions{.timeout_seconds = config.comm_timeout_seconds},
                        .should_stop = request.should_stop,
                        .on_step = request.on_step};
}

// Rank 0: the summary's run-level fields, then the outputs under `out`.
absl::Status WriteRollout(RolloutResult& r, const RolloutRequest& request, const RolloutOptions& o,
                          const FlowCase& flow, const std::string& out) {
  r.summary.run = request.run_dir;
  r.summary.tiling = absl::StrFormat("tile %d, overlap %d, %s blend, %d tiles per step in groups of %d, %d per call",
                                     o.tile, o.overlap, BlendModeName(o.blend), r.tiles, o.group_size, o.batch);
  r.summary.tiles_per_second = r.map_reduce_seconds > 0 ? r.tiles * request.steps / r.map_reduce_seconds : 0;
  RETURN_IF_ERROR(WriteOutputs(out, r, flow, request.own_folder, request.report_every));
  spdlog::info("rollout of {} over {} steps written to {}", request.run_dir, request.steps, out);
  return absl::OkStatus();
}

// The request's numbers in their ranges (the coordinator checks a pool's the same way).
absl::Status CheckNumbers(const RolloutRequest& r) {
  RolloutNumbers n{.steps = r.steps, .start_frame = r.start_frame, .tile = r.tile, .group = r.group_size,
                   .tile_batch = r.batch, .report_every = r.report_every};
  if (r.overlap >= 0) n.overlap = r.overlap;
  return CheckRolloutNumbers(n, RolloutNaming::kFlags);
}

std::string OutputFolderOf(const RolloutRequest& r) {
  return r.out.empty() ? RolloutOutputFolder(r.run_dir, r.case_dir) : r.out;
}

// Each call holds `batch` tiles in and out and the generator's activations for them, on
// every rank; the case's frames are held already. Refused when that cannot fit.
absl::Status CheckTilesFitMemory(const RolloutRequest& r, const TrainConfig& config, int64_t tile) {
  Pix2pixConfig at_tile = config.pix2pix;
  at_tile.image_size = tile;
  const double floats = static_cast<double>(r.batch) *
                        (Pix2pixGeneratorActivationFloats(at_tile) + 7.0 * static_cast<double>(tile * tile));
  return CheckFitsMemory({.what = absl::StrCat("--tile-batch ", r.batch, " (tiles of ", tile, "x", tile, ")"),
                          .bytes = floats * sizeof(float),
                          .fix = "lower --tile-batch"});
}

// Rank 0 checks that the output folder is free; every rank hears the verdict.
absl::Status AgreeOnOutput(Communicator& comm, const RolloutRequest& r, const CommOptions& opts, bool& failed) {
  absl::Status mine;
  if (comm.rank() == 0 && !r.own_folder) mine = CheckNewOutputFolder("--out", OutputFolderOf(r), "rollout");
  absl::StatusOr<bool> all_ok = AllRanksOk(comm, mine.ok(), opts);
  if (!all_ok.ok()) {
    failed = true;
    return all_ok.status();
  }
  if (!mine.ok()) return mine;
  if (!*all_ok) return absl::AbortedError("the output folder is refused (see rank 0's output)");
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRolloutJob(Communicator& comm, const RolloutRequest& request, RolloutJobEnd* end) {
  RolloutJobEnd ignored;
  RolloutJobEnd& e = end != nullptr ? *end : ignored;
  e = RolloutJobEnd{};
  const CommOptions startup{.timeout_seconds = 600};  // ranks may still be loading
  // Every rank parsed the same request: it refuses alike, before any collective.
  RETURN_IF_ERROR(CheckNumbers(request));
  ASSIGN_OR_RETURN(const BlendMode blend, ParseBlendMode(request.blend));
  ASSIGN_OR_RETURN(TrainedRun trained,
                   OpenTrainedRun(comm, {.run_dir = request.run_dir, .purpose = "roll out", .comm = startup},
                                  &e.collective_failed));
  RETURN_IF_ERROR(CheckNextFrameModel(*trained.model, request));
  const int64_t tile = trained.model->SampleShape()[1];
  const absl::Status fits = CheckTilesFitMemory(request, trained.settings.config, tile);
  ASSIGN_OR_RETURN(const FlowCase flow,
                   LoadCaseOnEveryRank(comm, request.case_dir, fits, startup, e.collective_failed));
  RETURN_IF_ERROR(AgreeOnOutput(comm, request, startup, e.collective_failed));
  const RolloutOptions o = OptionsFor(request, trained.settings.config, tile, blend);
  e.stage = RolloutStage::kRollingOut;
  ASSIGN_OR_RETURN(RolloutResult r, RunRollout(comm, flow, o, GeneratorTiles(*trained.model, tile)));
  e.stage = RolloutStage::kWriting;
  if (comm.rank() != 0) return absl::OkStatus();
  e.out = OutputFolderOf(request);
  return WriteRollout(r, request, o, flow, e.out);
}

}  // namespace gantry
