#include "worker/rollout/rollout_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

std::string Maybe(const std::optional<double>& v, const char* format = "%.6g") {
  return v ? absl::StrFormat(format, *v) : "";
}

std::string Dash(const std::optional<double>& v) { return v ? absl::StrFormat("%.4f", *v) : "-"; }

}  // namespace

std::string RolloutCsv(const std::vector<RolloutStepRow>& rows) {
  std::string out = "step,relative_l2,vorticity_correlation,persistence_relative_l2,seam_relative_l2,interior_relative_l2\n";
  for (const RolloutStepRow& r : rows) {
    absl::StrAppend(&out, r.step, ",", absl::StrFormat("%.6g,%.6g,%.6g,", r.relative_l2, r.vorticity_correlation,
                                                       r.persistence_relative_l2),
                    Maybe(r.seam_relative_l2), ",", Maybe(r.interior_relative_l2), "\n");
  }
  return out;
}

std::string RolloutMarkdown(const std::vector<RolloutStepRow>& rows, const RolloutSummary& s) {
  std::string out = absl::StrCat("# Rollout of ", s.run, "\n\n", "- case: `", s.case_dir, "`, from frame ",
                                 s.start_frame, ", ", rows.size(), " step(s) of ", s.horizon, " frame(s)\n");
  if (s.first_below) {
    absl::StrAppend(&out, "- vorticity correlation first below ", s.threshold, " at step ", *s.first_below);
    if (s.lattice_steps_per_frame) {
      absl::StrAppend(&out, " (", *s.first_below * s.horizon * *s.lattice_steps_per_frame, " lattice steps)");
    }
    absl::StrAppend(&out, "\n");
  } else {
    absl::StrAppend(&out, "- vorticity correlation stayed >= ", s.threshold, " for all ", rows.size(), " steps\n");
  }
  if (s.strouhal_predicted && s.strouhal_true) {
    absl::StrAppend(&out, absl::StrFormat("- Strouhal number at the probe: predicted %.4f, true %.4f (%+.1f%%)\n",
                                          *s.strouhal_predicted, *s.strouhal_true,
                                          100 * (*s.strouhal_predicted / *s.strouhal_true - 1)));
  } else {
    absl::StrAppend(&out, "- Strouhal number: predicted ", Dash(s.strouhal_predicted), ", true ", Dash(s.strouhal_true),
                    s.strouhal_note.empty() ? "" : absl::StrCat(" (", s.strouhal_note, ")"), "\n");
  }
  absl::StrAppend(&out, "- inference: ", s.tiling, absl::StrFormat(", %.1f tiles/s over %d rank(s)\n", s.tiles_per_second, s.ranks));
  if (s.seam_band > 0) {
    absl::StrAppend(&out, "- seam band: pixels within ", s.seam_band, " cells of an inner tile edge\n");
  }
  absl::StrAppend(&out, "\n| step | rel. L2 | vorticity corr. | persistence rel. L2 | seam rel. L2 | interior rel. L2 |\n",
                  "|---:|---:|---:|---:|---:|---:|\n");
  for (const RolloutStepRow& r : rows) {
    absl::StrAppend(&out, absl::StrFormat("| %d | %.4f | %.4f | %.4f | ", r.step, r.relative_l2, r.vorticity_correlation,
                                          r.persistence_relative_l2),
                    Dash(r.seam_relative_l2), " | ", Dash(r.interior_relative_l2), " |\n");
  }
  return out;
}

}  // namespace gantry
