#include "report/progress_line.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "spdlog/spdlog.h"

namespace gantry {

std::string FormatDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, seconds));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s / 60) % 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

ProgressLine::ProgressLine(const Clock& clock, double interval_s, std::string precision)
    : clock_(clock), interval_s_(interval_s), last_(clock.NowSeconds()), precision_(std::move(precision)) {}

void ProgressLine::MaybePrint(int64_t batch, int64_t epoch, int64_t epochs, int64_t step, int64_t steps,
                              const EpochAccumulator& acc) {
  const double now = clock_.NowSeconds();
  if (now - last_ < interval_s_ || acc.steps() == 0) return;
  last_ = now;
  const double rate = acc.RecentSamplesPerSecond();
  const double eta = rate > 0 ? static_cast<double>((steps - step) * batch) / rate : 0.0;
  const std::string skips = acc.skipped_g() + acc.skipped_d() > 0
                                ? absl::StrFormat(" skipped G/D %d/%d", acc.skipped_g(), acc.skipped_d())
                                : "";
  spdlog::info("batch {} ({}) epoch {}/{} step {}/{} ({:.0f}%) {:.1f} samples/s ETA {} d_loss {:.4f} g_loss {:.4f}{}",
               batch, precision_, epoch, epochs, step, steps,
               100.0 * static_cast<double>(step) / static_cast<double>(steps), rate, FormatDuration(eta),
               acc.mean_d_loss(), acc.mean_g_loss(), skips);
}

}  // namespace gantry
