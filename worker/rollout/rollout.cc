#include "worker/rollout/rollout.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/flow/strouhal.h"
#include "worker/infer/tile_assignment.h"
#include "worker/infer/tile_plan.h"
#include "worker/rollout/energy_spectrum.h"
#include "worker/rollout/rollout_metrics.h"

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

// OK when the case has the frames the rollout reads and a tile side for its field.
// Overflow-safe: the frames left after the start are counted, never start + steps x horizon.
absl::Status CheckRolloutFits(const FlowCase& flow, const RolloutOptions& o) {
  if (o.start_frame < 0 || o.start_frame >= flow.frames - 1) {
    return absl::InvalidArgumentError(absl::StrCat("--start-frame ", o.start_frame, ": ", flow.dir, " has ",
                                                   flow.frames, " frames (0 to ", flow.frames - 1,
                                                   "); a rollout needs a frame after its start: use --start-frame 0 "
                                                   "to ", std::max<int64_t>(flow.frames - 2, 0)));
  }
  const int64_t most_steps = o.horizon > 0 ? (flow.frames - 1 - o.start_frame) / o.horizon : 0;
  if (o.steps < 1 || o.horizon < 1 || o.steps > most_steps) {
    // In 128 bits: steps x horizon may pass int64 (the message still says which frame).
    const __int128 last = static_cast<__int128>(o.start_frame) + static_cast<__int128>(o.steps) * o.horizon;
    const std::string needs = last <= std::numeric_limits<int64_t>::max()
                                  ? absl::StrCat("needs frame ", static_cast<int64_t>(last))
                                  : std::string("needs a frame past 2^63");
    return absl::InvalidArgumentError(absl::StrCat("a rollout of ", o.steps, " step(s) of ", o.horizon,
                                                   " frame(s) from frame ", o.start_frame, " ", needs, " but ",
                                                   flow.dir, " has ", flow.frames, "; use --steps <= ", most_steps,
                                                   " or record more frames (make-flow --frames)"));
  }
  if (o.tile == 0 && flow.ny != flow.nx) {
    return absl::InvalidArgumentError(absl::StrCat("the ", flow.ny, "x", flow.nx,
                                                   " field is not square: give --tile (the model's --image-size)"));
  }
  return absl::OkStatus();
}

// How the field is cut into tiles and spread over the ranks, and which pixels lie in the
// seam bands (scored apart from the interior).
struct Tiling {
  TilePlan plan;
  TileBlender blender;
  TileAssignment assignment;
  int64_t band = 0;            // seam band width; 0 when the field is one tile
  std::vector<uint8_t> seams;  // per pixel: 1 inside a seam band
};

absl::StatusOr<Tiling> PlanTiling(const FlowCase& flow, const RolloutOptions& o, int ranks) {
  const int64_t tile = o.tile > 0 ? o.tile : flow.ny;
  ASSIGN_OR_RETURN(TilePlan plan, PlanTiles(flow.ny, flow.nx, tile, o.overlap));
  const int64_t band = std::max<int64_t>(1, tile / 8);
  TileBlender blender(plan, o.blend);
  TileAssignment assignment = AssignTiles(plan.count(), o.group_size, ranks);
  std::vector<uint8_t> seams = SeamBandMask(plan, band);
  const bool tiled = plan.count() > 1;
  return Tiling{std::move(plan), std::move(blender), std::move(assignment), tiled ? band : 0, std::move(seams)};
}

// The summary's fields known before the first step.
RolloutSummary SummaryHeader(const FlowCase& flow, const RolloutOptions& o, const Tiling& tiling, int ranks) {
  RolloutSummary s;
  s.case_dir = flow.dir;
  s.start_frame = o.start_frame;
  s.horizon = o.horizon;
  s.lattice_steps_per_frame = flow.info.every;
  s.threshold = o.threshold;
  s.seam_band = tiling.band;
  s.ranks = ranks;
  return s;
}

// The flat index of flow.json's probe in a plane, or -1 when it has none inside the field.
int64_t ProbeIndex(const FlowCase& flow) {
  const FlowCaseInfo& i = flow.info;
  if (!i.probe_x || !i.probe_y) return -1;
  if (*i.probe_x < 0 || *i.probe_y < 0 || *i.probe_x >= flow.nx || *i.probe_y >= flow.ny) return -1;
  return *i.probe_y * flow.nx + *i.probe_x;
}

// The model's first input: the normalised start frame and the obstacle mask (which never changes).
std::vector<float> FirstInput(const FlowCase& flow, int64_t start_frame) {
  const int64_t plane = flow.plane();
  std::vector<float> input(4 * plane);
  NormaliseFrame(flow, start_frame, input.data());
  std::copy(flow.mask.begin(), flow.mask.end(), input.begin() + 3 * plane);
  return input;
}

// A step's prediction (denormalised) against the simulator's frame.
RolloutStepRow ScoreStep(const FlowCase& flow, const RolloutOptions& o, const Tiling& tiling, int64_t step,
                         const float* predicted, const float* truth) {
  const int64_t plane = flow.plane();
  RolloutStepRow row;
  row.step = step;
  row.relative_l2 = RelativeL2(predicted, truth, 3 * plane);
  row.vorticity_correlation = UncentredCorrelation(predicted + 2 * plane, truth + 2 * plane, plane);
  row.persistence_relative_l2 = RelativeL2(flow.frame(o.start_frame), truth, 3 * plane);
  row.spectrum_error = SpectrumError(StreamwiseEnergySpectrum(predicted, flow.ny, flow.nx),
                                     StreamwiseEnergySpectrum(truth, flow.ny, flow.nx));
  if (tiling.band > 0) {
    row.seam_relative_l2 = RelativeL2Masked(predicted, truth, 3, plane, tiling.seams, 1);
    row.interior_relative_l2 = RelativeL2Masked(predicted, truth, 3, plane, tiling.seams, 0);
  }
  return row;
}

// CANCELLED on every rank when any rank's should_stop asks for it (one all-reduce).
absl::Status AgreeToGoOn(Communicator& comm, const RolloutOptions& o, int64_t step) {
  if (!o.should_stop) return absl::OkStatus();
  float stop = o.should_stop() ? 1.0f : 0.0f;
  RETURN_IF_ERROR(comm.AllReduceSum(&stop, 1, o.comm));
  if (stop != 0.0f) return absl::CancelledError(absl::StrCat("stopped before rollout step ", step));
  return absl::OkStatus();
}

// Rank 0's record of the rollout as it goes: rows, strip fields and the probe's series.
class RolloutRecorder {
 public:
  RolloutRecorder(const FlowCase& flow, const RolloutOptions& o, const Tiling& tiling, RolloutResult& result)
      : flow_(flow), o_(o), tiling_(tiling), result_(result), probe_(ProbeIndex(flow)) {
    result_.true_vorticity.push_back(Vorticity(flow.frame(o.start_frame), flow.plane()));
    result_.predicted_vorticity.push_back(result_.true_vorticity.back());
  }

  // `predicted` is step `step`'s frame, denormalised.
  void Add(int64_t step, const float* predicted) {
    const int64_t plane = flow_.plane();
    const float* truth = flow_.frame(o_.start_frame + step * o_.horizon);
    const RolloutStepRow row = ScoreStep(flow_, o_, tiling_, step, predicted, truth);
    correlations_.push_back(row.vorticity_correlation);
    if (!result_.summary.blow_up && BlewUp(predicted, truth, 3 * plane)) result_.summary.blow_up = step;
    if (probe_ >= 0) {
      probe_predicted_.push_back(predicted[plane + probe_]);  // uy
      probe_true_.push_back(truth[plane + probe_]);
    }
    result_.rows.push_back(row);
    result_.predicted_vorticity.push_back(Vorticity(predicted, plane));
    result_.true_vorticity.push_back(Vorticity(truth, plane));
  }

  // The summary's verdicts once every step is in.
  void Finish() {
    RolloutSummary& s = result_.summary;
    if (std::optional<int64_t> below = FirstBelow(correlations_, o_.threshold)) s.first_below = *below + 1;
    if (std::optional<int64_t> below = FirstBelow(correlations_, s.loose_threshold)) s.first_below_loose = *below + 1;
    if (probe_ >= 0) {
      MeasureStrouhal(flow_, o_, probe_predicted_, probe_true_, s);
    } else {
      s.strouhal_note = "flow.json has no probe inside the field";
    }
  }

 private:
  const FlowCase& flow_;
  const RolloutOptions& o_;
  const Tiling& tiling_;
  RolloutResult& result_;
  const int64_t probe_;
  std::vector<double> correlations_, probe_predicted_, probe_true_;
};

}  // namespace

absl::StatusOr<RolloutResult> RunRollout(Communicator& comm, const FlowCase& flow, const RolloutOptions& o,
                                         const TileFunction& model) {
  RETURN_IF_ERROR(CheckRolloutFits(flow, o));
  ASSIGN_OR_RETURN(const Tiling tiling, PlanTiling(flow, o, comm.size()));
  RolloutResult result;
  result.tiles = tiling.plan.count();
  result.summary = SummaryHeader(flow, o, tiling, comm.size());
  const bool root = comm.rank() == 0;
  std::optional<RolloutRecorder> recorder;
  if (root) recorder.emplace(flow, o, tiling, result);
  std::vector<float> input = FirstInput(flow, o.start_frame);
  const TiledStepOptions step_options{.in_channels = 4, .out_channels = 3, .batch = o.batch, .comm = o.comm};
  for (int64_t step = 1; step <= o.steps; ++step) {
    RETURN_IF_ERROR(AgreeToGoOn(comm, o, step));
    const double t0 = o.clock->NowSeconds();
    ASSIGN_OR_RETURN(std::vector<float> next,
                     TiledMapReduce(comm, tiling.blender, tiling.assignment, input.data(), step_options, model));
    result.map_reduce_seconds += o.clock->NowSeconds() - t0;
    std::copy(next.begin(), next.end(), input.begin());  // fed back, normalised
    if (!root) continue;
    DenormaliseFrame(flow.norm, flow.plane(), next.data());
    recorder->Add(step, next.data());
    if (o.on_step) {
      const double tiles = static_cast<double>(result.tiles * step);
      o.on_step(step, result.map_reduce_seconds > 0 ? tiles / result.map_reduce_seconds : 0);
    }
  }
  if (root) recorder->Finish();
  return result;
}

}  // namespace gantry
