#include "report/epoch_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {

std::string FormatEpochTable(const std::vector<EpochRow>& rows) {
  std::string out = absl::StrFormat("%6s %5s %5s %6s %9s %9s %11s %9s %8s %8s %9s %8s\n", "batch", "ranks", "epoch",
                                    "steps", "seconds", "step_ms", "samples/s", "allred_ms", "d_loss", "g_loss",
                                    "skip_g/d", "rss_MiB");
  for (const EpochRow& r : rows) {
    absl::StrAppendFormat(&out, "%6d %5d %5d %6d %9.1f %9.2f %11.1f %9.2f %8.4f %8.4f %9s %8.0f\n", r.batch_size,
                          r.world_size, r.epoch, r.steps, r.seconds, r.steady_step_ms, r.samples_per_s,
                          r.allreduce_ms, r.d_loss, r.g_loss, absl::StrCat(r.skipped_steps_g, "/", r.skipped_steps_d),
                          r.peak_rss_mb);
  }
  return out;
}

}  // namespace gantry
