// rollout.csv, rollout.md and rollout.json: a rollout's per-step errors and its summary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gantry {

struct RolloutStepRow {
  int64_t step = 0;                   // 1 = the first prediction
  double relative_l2 = 0;             // all three channels, physical units, vs the truth
  double vorticity_correlation = 0;   // uncentred, vorticity channel only
  double persistence_relative_l2 = 0; // the same error of "copy the start frame" (baseline)
  std::optional<double> seam_relative_l2;      // within the seam band (tiled runs only)
  std::optional<double> interior_relative_l2;  // outside it
  double spectrum_error = 0;          // streamwise energy spectrum vs the truth's (energy_spectrum.h)
};

struct RolloutSummary {
  std::string run;            // the checkpoint's run folder
  std::string case_dir;
  int64_t start_frame = 0;
  int64_t horizon = 1;        // frames per model step
  std::optional<int64_t> lattice_steps_per_frame;  // flow.json "every"
  double threshold = 0.95;
  std::optional<int64_t> first_below;  // first step (1-based) with correlation < threshold
  double loose_threshold = 0.8;        // the second, looser mark of a long rollout
  std::optional<int64_t> first_below_loose;
  std::optional<int64_t> blow_up;      // first step (1-based) that blew up (rollout_metrics.h BlewUp)
  std::optional<double> strouhal_predicted;
  std::optional<double> strouhal_true;
  std::string strouhal_note;  // why a Strouhal number is missing, when it is
  std::string tiling;         // "tile 64, overlap 16, gaussian blend, 12 tiles over 2 ranks"
  int64_t seam_band = 0;
  double tiles_per_second = 0;
  int ranks = 1;
};

// Header "step,relative_l2,vorticity_correlation,persistence_relative_l2,
// seam_relative_l2,interior_relative_l2,spectrum_error", one line per reported step (every step, or with
// `report_every` K > 1 the steps that are multiples of K and the last); absent values are empty.
std::string RolloutCsv(const std::vector<RolloutStepRow>& rows, int64_t report_every = 1);

// The summary (time until the correlation drops below each threshold, in model steps and,
// when known, lattice steps; the first blow-up, if any; Strouhal numbers; tiling and
// tiles/s) and the table.
// The summary is of every step in `rows`; the table holds the reported ones (RolloutCsv's).
std::string RolloutMarkdown(const std::vector<RolloutStepRow>& rows, const RolloutSummary& summary,
                            int64_t report_every = 1);

// The summary's marks as JSON, for programs (the coordinator's dashboard): {"steps",
// "start_frame", "horizon", "threshold", "first_below", "loose_threshold",
// "first_below_loose", "blow_up", "strouhal_predicted", "strouhal_true"}; a mark that was
// not reached (or a Strouhal number not measured) is null. Steps are 1-based model steps.
std::string RolloutSummaryJson(const std::vector<RolloutStepRow>& rows, const RolloutSummary& summary);

}  // namespace gantry
