#include "report/epoch_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "common/timing_summary.h"

namespace gantry {

const std::vector<EpochColumn>& EpochColumns() {
  static const auto* columns = new std::vector<EpochColumn>{
      {"batch_size", "%d", &EpochRow::batch_size},
      {"epoch", "%d", &EpochRow::epoch},
      {"seconds", "%.3f", &EpochRow::seconds},
      {"steady_step_ms", "%.3f", &EpochRow::steady_step_ms},
      {"samples_per_s", "%.1f", &EpochRow::samples_per_s},
      {"d_loss", "%.5f", &EpochRow::d_loss},
      {"g_loss", "%.5f", &EpochRow::g_loss},
      {"steps", "%d", &EpochRow::steps},
      {"step_p50_ms", "%.3f", &EpochRow::step_p50_ms},
      {"step_p99_ms", "%.3f", &EpochRow::step_p99_ms},
      {"data_wait_ms", "%.3f", &EpochRow::data_wait_ms},
      {"world_size", "%d", &EpochRow::world_size},
      {"allreduce_ms", "%.3f", &EpochRow::allreduce_ms},
      {"allreduce_share", "%.4f", &EpochRow::allreduce_share},
      {"straggler_flags", "%d", &EpochRow::straggler_flags},
      {"loss_scale_g", "%.9g", &EpochRow::loss_scale_g},
      {"loss_scale_d", "%.9g", &EpochRow::loss_scale_d},
      {"skipped_steps_g", "%d", &EpochRow::skipped_steps_g},
      {"skipped_steps_d", "%d", &EpochRow::skipped_steps_d},
      {"peak_rss_mb", "%.1f", &EpochRow::peak_rss_mb},
      {"energy_j", "%.1f", &EpochRow::energy_j},
      {"energy_j_per_sample", "%.6g", &EpochRow::energy_j_per_sample},
      {"energy_estimated", "%d", &EpochRow::energy_estimated},
      {"quality_fd", "%.4f", &EpochRow::quality_fd},
      {"quality_class_entropy", "%.4f", &EpochRow::quality_class_entropy},
      {"quality_marginal_entropy", "%.4f", &EpochRow::quality_marginal_entropy},
      {"quality_confidence", "%.4f", &EpochRow::quality_confidence},
      {"val_l1", "%.5f", &EpochRow::val_l1},
      {"val_rel_l2", "%.5f", &EpochRow::val_rel_l2},
      {"energy_source", "%d", &EpochRow::energy_source},
      {"val_persistence_l1", "%.5f", &EpochRow::val_persistence_l1},
      {"val_persistence_rel_l2", "%.5f", &EpochRow::val_persistence_rel_l2},
      {"quality_kid", "%.6g", &EpochRow::quality_kid},
      {"allreduce_exposed_ms", "%.3f", &EpochRow::allreduce_exposed_ms},
  };
  return *columns;
}

bool EpochRow::operator==(const EpochRow& other) const {
  for (const EpochColumn& column : EpochColumns()) {
    const bool same = std::visit(
        [&](auto member) {
          const auto a = this->*member, b = other.*member;
          if constexpr (std::is_floating_point_v<decltype(a)>) return a == b || (std::isnan(a) && std::isnan(b));
          return a == b;
        },
        column.member);
    if (!same) return false;
  }
  return true;
}

std::string EpochCsvHeader() {
  std::string header;
  for (const EpochColumn& column : EpochColumns()) {
    if (!header.empty()) header += ",";
    header += column.name;
  }
  return header;
}

std::string EpochCsvLine(const EpochRow& r) {
  std::string line;
  for (const EpochColumn& column : EpochColumns()) {
    if (!line.empty()) line += ",";
    const absl::UntypedFormatSpec format(column.csv_format);
    std::visit([&](auto member) { absl::FormatUntyped(&line, format, {absl::FormatArg(r.*member)}); },
               column.member);
  }
  return line;
}

void EpochAccumulator::AddStep(double step_seconds, double data_wait_seconds, double allreduce_seconds,
                               double d_loss, double g_loss, double allreduce_exposed_seconds) {
  sums_.step_seconds.push_back(step_seconds);
  sums_.data_wait_s += data_wait_seconds;
  sums_.allreduce_s += allreduce_seconds;
  if (allreduce_exposed_seconds >= 0) {
    sums_.allreduce_hidden_s += std::max(0.0, allreduce_seconds - allreduce_exposed_seconds);
  }
  sums_.d_loss += d_loss;
  sums_.g_loss += g_loss;
}

double EpochAccumulator::RecentSamplesPerSecond(size_t window) const {
  const std::vector<double>& steps = sums_.step_seconds;
  const size_t n = std::min(window, steps.size());
  if (n == 0) return 0.0;
  const double secs = std::accumulate(steps.end() - static_cast<std::ptrdiff_t>(n), steps.end(), 0.0);
  return secs > 0 ? static_cast<double>(n * batch_size_) / secs : 0.0;
}

EpochRow EpochAccumulator::Finish(double epoch_seconds, int world_size, int64_t straggler_flags) const {
  const std::vector<double>& step_seconds = sums_.step_seconds;
  EpochRow r;
  r.batch_size = batch_size_;
  r.epoch = epoch_;
  r.steps = steps();
  r.seconds = epoch_seconds;
  const double steady_s = SteadyStateMean(step_seconds, 0.1);
  r.steady_step_ms = steady_s * 1e3;
  r.samples_per_s = steady_s > 0 ? static_cast<double>(batch_size_) / steady_s : 0.0;
  r.d_loss = mean_d_loss();
  r.g_loss = mean_g_loss();
  r.step_p50_ms = Percentile(step_seconds, 0.5) * 1e3;
  r.step_p99_ms = Percentile(step_seconds, 0.99) * 1e3;
  const double n = static_cast<double>(std::max<int64_t>(1, steps()));
  r.data_wait_ms = sums_.data_wait_s / n * 1e3;
  r.world_size = world_size;
  r.allreduce_ms = sums_.allreduce_s / n * 1e3;
  r.allreduce_exposed_ms = (sums_.allreduce_s - sums_.allreduce_hidden_s) / n * 1e3;
  const double mean_step_ms = std::accumulate(step_seconds.begin(), step_seconds.end(), 0.0) / n * 1e3;
  r.allreduce_share = mean_step_ms > 0 ? r.allreduce_ms / mean_step_ms : 0.0;
  r.straggler_flags = straggler_flags;
  r.skipped_steps_g = sums_.skipped_g;
  r.skipped_steps_d = sums_.skipped_d;
  return r;
}

}  // namespace gantry
