#include "worker/rollout/rollout_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "worker/rollout/rollout_metrics.h"

namespace gantry {
namespace {

std::string Maybe(const std::optional<double>& v, const char* format = "%.6g") {
  return v ? absl::StrFormat(format, *v) : "";
}

std::string Dash(const std::optional<double>& v) { return v ? absl::StrFormat("%.4f", *v) : "-"; }

// Whether rows[i] of `count` is reported at `every`: multiples of it, and the last.
bool Reported(const RolloutStepRow& row, size_t i, size_t count, int64_t every) {
  return every <= 1 || row.step % every == 0 || i + 1 == count;
}

// "- vorticity correlation first below T at step N (L lattice steps)", or that it stayed above.
void AppendFirstBelow(const RolloutSummary& s, double threshold, const std::optional<int64_t>& first, size_t steps,
                      std::string& out) {
  if (!first) {
    absl::StrAppend(&out, "- vorticity correlation stayed >= ", threshold, " for all ", steps, " steps\n");
    return;
  }
  absl::StrAppend(&out, "- vorticity correlation first below ", threshold, " at step ", *first);
  if (s.lattice_steps_per_frame) {
    absl::StrAppend(&out, " (", *first * s.horizon * *s.lattice_steps_per_frame, " lattice steps)");
  }
  absl::StrAppend(&out, "\n");
}

}  // namespace

std::string RolloutCsv(const std::vector<RolloutStepRow>& rows, int64_t report_every) {
  std::string out =
      "step,relative_l2,vorticity_correlation,persistence_relative_l2,seam_relative_l2,interior_relative_l2,"
      "spectrum_error\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const RolloutStepRow& r = rows[i];
    if (!Reported(r, i, rows.size(), report_every)) continue;
    absl::StrAppend(&out, r.step, ",", absl::StrFormat("%.6g,%.6g,%.6g,", r.relative_l2, r.vorticity_correlation,
                                                       r.persistence_relative_l2),
                    Maybe(r.seam_relative_l2), ",", Maybe(r.interior_relative_l2), ",",
                    absl::StrFormat("%.6g", r.spectrum_error), "\n");
  }
  return out;
}

std::string RolloutMarkdown(const std::vector<RolloutStepRow>& rows, const RolloutSummary& s, int64_t report_every) {
  std::string out = absl::StrCat("# Rollout of ", s.run, "\n\n", "- case: `", s.case_dir, "`, from frame ",
                                 s.start_frame, ", ", rows.size(), " step(s) of ", s.horizon, " frame(s)\n");
  AppendFirstBelow(s, s.threshold, s.first_below, rows.size(), out);
  AppendFirstBelow(s, s.loose_threshold, s.first_below_loose, rows.size(), out);
  if (s.blow_up) {
    absl::StrAppend(&out, "- blew up at step ", *s.blow_up, " (a non-finite value, or a field norm beyond ",
                    kBlowUpNormRatio, "x the truth's)\n");
  } else {
    absl::StrAppend(&out, "- no blow-up in ", rows.size(), " steps (no non-finite value, no field norm beyond ",
                    kBlowUpNormRatio, "x the truth's)\n");
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
  if (report_every > 1) {
    absl::StrAppend(&out, "- the table: the steps that are multiples of ", report_every, ", and the last (--report-every ",
                    report_every, ")\n");
  }
  absl::StrAppend(&out, "\n| step | rel. L2 | vorticity corr. | persistence rel. L2 | seam rel. L2 | interior rel. L2 | "
                  "spectrum err. |\n",
                  "|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const RolloutStepRow& r = rows[i];
    if (!Reported(r, i, rows.size(), report_every)) continue;
    absl::StrAppend(&out, absl::StrFormat("| %d | %.4f | %.4f | %.4f | ", r.step, r.relative_l2, r.vorticity_correlation,
                                          r.persistence_relative_l2),
                    Dash(r.seam_relative_l2), " | ", Dash(r.interior_relative_l2),
                    absl::StrFormat(" | %.4f |\n", r.spectrum_error));
  }
  return out;
}

namespace {

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string RolloutSummaryJson(const std::vector<RolloutStepRow>& rows, const RolloutSummary& s) {
  nlohmann::ordered_json j;
  j["steps"] = rows.size();
  j["start_frame"] = s.start_frame;
  j["horizon"] = s.horizon;
  j["threshold"] = s.threshold;
  j["first_below"] = OrNull(s.first_below);
  j["loose_threshold"] = s.loose_threshold;
  j["first_below_loose"] = OrNull(s.first_below_loose);
  j["blow_up"] = OrNull(s.blow_up);
  j["strouhal_predicted"] = OrNull(s.strouhal_predicted);
  j["strouhal_true"] = OrNull(s.strouhal_true);
  return j.dump(2) + "\n";
}

}  // namespace gantry
