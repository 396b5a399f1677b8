// rollout.csv and rollout.md: a rollout's per-step errors and its summary.
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
};

struct RolloutSummary {
  std::string run;            // the checkpoint's run folder
  std::string case_dir;
  int64_t start_frame = 0;
  int64_t horizon = 1;        // frames per model step
  std::optional<int64_t> lattice_steps_per_frame;  // flow.json "every"
  double threshold = 0.95;
  std::optional<int64_t> first_below;  // first step (1-based) with correlation < threshold
  std::optional<double> strouhal_predicted;
  std::optional<double> strouhal_true;
  std::string strouhal_note;  // why a Strouhal number is missing, when it is
  std::string tiling;         // "tile 64, overlap 16, gaussian blend, 12 tiles over 2 ranks"
  int64_t seam_band = 0;
  double tiles_per_second = 0;
  int ranks = 1;
};

// Header "step,relative_l2,vorticity_correlation,persistence_relative_l2,
// seam_relative_l2,interior_relative_l2", one line per step; absent values are empty.
std::string RolloutCsv(const std::vector<RolloutStepRow>& rows);

// The summary (time until the correlation drops below the threshold, in model steps and,
// when known, lattice steps; Strouhal numbers; tiling and tiles/s) and the table.
std::string RolloutMarkdown(const std::vector<RolloutStepRow>& rows, const RolloutSummary& summary);

}  // namespace gantry
