#include "worker/infer/rollout.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/infer/rollout_metrics.h"
#include "worker/flow/strouhal.h"
#include "worker/infer/tile_assignment.h"
#include "worker/infer/tile_plan.h"

namespace gantry {
namespace {

std::vector<float> Vorticity(const float* frame, int64_t plane) {
  return std::vector<float>(frame + 2 * plane, frame + 3 * plane);
}

// The Strouhal numbers of the predicted and true uy at the probe over the steps.
void MeasureStrouhal(const FlowCase& flow, const RolloutOptions& o, const std::vector<double>& predicted,
                     const std::vector<double>& truth, RolloutSummary& s) {
  const FlowCaseInfo& info = flow.info;
  if (!info.diameter || !info.u_lattice || !info.every || !info.probe_x || !info.probe_y) {
    s.strouhal_note = "flow.json lacks diameter, u_lattice, every or probe";
    return;
  }
  const double steps_per_sample = static_cast<double>(*info.every * o.horizon);
  const double d = *info.diameter, u = *info.u_lattice;
  // gantry::flow: `flow` is the case here.
  const gantry::flow::StrouhalEstimate p = gantry::flow::MeasureStrouhal(predicted, steps_per_sample, d, u);
  const gantry::flow::StrouhalEstimate t = gantry::flow::MeasureStrouhal(truth, steps_per_sample, d, u);
  if (p.found) s.strouhal_predicted = p.strouhal;
  if (t.found) s.strouhal_true = t.strouhal;
  if (!p.found) s.strouhal_note = absl::StrCat("predicted: ", p.why_not);
  if (!t.found) absl::StrAppend(&s.strouhal_note, s.strouhal_note.empty() ? "" : "; ", "true: ", t.why_not);
}

}  // namespace

absl::StatusOr<RolloutResult> RunRollout(Communicator& comm, const FlowCase& flow, const RolloutOptions& o,
                                         const TileFunction& model) {
  const int64_t last = o.start_frame + o.steps * o.horizon;
  if (o.start_frame < 0 || o.steps < 1 || last >= flow.frames) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a rollout of ", o.steps, " step(s) of ", o.horizon, " frame(s) from frame ", o.start_frame, " needs frame ",
        last, " but ", flow.dir, " has ", flow.frames, "; use --steps <= ", (flow.frames - 1 - o.start_frame) / o.horizon,
        " or record more frames (make-flow --frames)"));
  }
  const int64_t tile = o.tile > 0 ? o.tile : flow.ny;
  if (o.tile == 0 && flow.ny != flow.nx) {
    return absl::InvalidArgumentError(absl::StrCat("the ", flow.ny, "x", flow.nx,
                                                   " field is not square: give --tile (the model's --image-size)"));
  }
  ASSIGN_OR_RETURN(const TilePlan plan, PlanTiles(flow.ny, flow.nx, tile, o.overlap));
  const TileBlender blender(plan, o.blend);
  const TileAssignment assignment = AssignTiles(plan.count(), o.group_size, comm.size());
  const int64_t plane = flow.plane();
  const int64_t band = std::max<int64_t>(1, tile / 8);
  const std::vector<uint8_t> seams = SeamBandMask(plan, band);
  const bool tiled = plan.count() > 1;

  RolloutResult result;
  result.tiles = plan.count();
  RolloutSummary& s = result.summary;
  s.case_dir = flow.dir;
  s.start_frame = o.start_frame;
  s.horizon = o.horizon;
  s.lattice_steps_per_frame = flow.info.every;
  s.threshold = o.threshold;
  s.seam_band = tiled ? band : 0;
  s.ranks = comm.size();

  // The model's input: normalised frame + mask; the mask channel never changes.
  std::vector<float> input(4 * plane);
  NormaliseFrame(flow, o.start_frame, input.data());
  std::copy(flow.mask.begin(), flow.mask.end(), input.begin() + 3 * plane);
  const TiledStepOptions step_options{.in_channels = 4, .out_channels = 3, .batch = o.batch, .comm = o.comm};
  std::vector<double> correlations, probe_predicted, probe_true;
  const int64_t probe = flow.info.probe_x && flow.info.probe_y && *flow.info.probe_y < flow.ny &&
                                *flow.info.probe_x < flow.nx && *flow.info.probe_x >= 0 && *flow.info.probe_y >= 0
                            ? *flow.info.probe_y * flow.nx + *flow.info.probe_x
                            : -1;
  const bool root = comm.rank() == 0;
  if (root) result.true_vorticity.push_back(Vorticity(flow.frame(o.start_frame), plane));
  if (root) result.predicted_vorticity.push_back(result.true_vorticity.back());
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (o.should_stop) {
      float stop = o.should_stop() ? 1.0f : 0.0f;
      RETURN_IF_ERROR(comm.AllReduceSum(&stop, 1, o.comm));
      if (stop != 0.0f) return absl::CancelledError(absl::StrCat("stopped before rollout step ", step));
    }
    const auto t0 = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(std::vector<float> next, TiledMapReduce(comm, blender, assignment, input.data(), step_options, model));
    result.map_reduce_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::copy(next.begin(), next.end(), input.begin());  // fed back, normalised
    if (!root) continue;
    DenormaliseFrame(flow.norm, plane, next.data());
    const float* truth = flow.frame(o.start_frame + step * o.horizon);
    RolloutStepRow row;
    row.step = step;
    row.relative_l2 = RelativeL2(next.data(), truth, 3 * plane);
    row.vorticity_correlation = UncentredCorrelation(next.data() + 2 * plane, truth + 2 * plane, plane);
    row.persistence_relative_l2 = RelativeL2(flow.frame(o.start_frame), truth, 3 * plane);
    if (tiled) {
      row.seam_relative_l2 = RelativeL2Masked(next.data(), truth, 3, plane, seams, 1);
      row.interior_relative_l2 = RelativeL2Masked(next.data(), truth, 3, plane, seams, 0);
    }
    correlations.push_back(row.vorticity_correlation);
    if (probe >= 0) {
      probe_predicted.push_back(next[plane + probe]);  // uy
      probe_true.push_back(truth[plane + probe]);
    }
    result.rows.push_back(row);
    result.predicted_vorticity.push_back(Vorticity(next.data(), plane));
    result.true_vorticity.push_back(Vorticity(truth, plane));
    if (o.on_step) {
      const double tiles = static_cast<double>(plan.count() * step);
      o.on_step(step, result.map_reduce_seconds > 0 ? tiles / result.map_reduce_seconds : 0);
    }
  }
  if (root) {
    if (std::optional<int64_t> below = FirstBelow(correlations, o.threshold)) s.first_below = *below + 1;
    if (probe >= 0) {
      MeasureStrouhal(flow, o, probe_predicted, probe_true, s);
    } else {
      s.strouhal_note = "flow.json has no probe inside the field";
    }
  }
  return result;
}

}  // namespace gantry
