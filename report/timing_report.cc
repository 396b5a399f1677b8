#include "report/timing_report.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/energy_source.h"

namespace gantry {

std::vector<BatchSizeSummary> SummarizeByBatchSize(const std::vector<EpochRow>& rows) {
  std::map<int64_t, BatchSizeSummary> by_batch;
  for (const EpochRow& r : rows) {
    BatchSizeSummary& s = by_batch[r.batch_size];
    s.batch_size = r.batch_size;
    ++s.epochs;
    s.total_seconds += r.seconds;
    s.samples_per_s += r.samples_per_s;
    s.allreduce_share += r.allreduce_share;
    s.energy_j += r.energy_j;
    s.samples += r.steps * r.batch_size;
    s.energy_estimated = s.energy_estimated || r.energy_estimated != 0;
    if (r.energy_j > 0) s.energy_sources.insert(static_cast<int>(EnergySourceOf(r.energy_source, r.energy_estimated)));
  }
  std::vector<BatchSizeSummary> out;
  for (auto& [batch, s] : by_batch) {
    s.seconds_per_epoch = s.total_seconds / static_cast<double>(s.epochs);
    s.samples_per_s /= static_cast<double>(s.epochs);
    s.allreduce_share /= static_cast<double>(s.epochs);
    out.push_back(s);
  }
  if (!out.empty() && out.front().total_seconds > 0) {
    for (BatchSizeSummary& s : out) s.change_vs_smallest = s.total_seconds / out.front().total_seconds - 1.0;
  }
  return out;
}

namespace {

// How timing.md names an energy source.
std::string DescribeSource(int code) {
  switch (static_cast<EnergySource>(code)) {
    case EnergySource::kEstimate: return "estimated: CPU seconds x --watts-per-core";
    case EnergySource::kRapl: return "measured: RAPL";
    case EnergySource::kNvml: return "measured: NVML, the GPUs";
    case EnergySource::kNone: break;
  }
  return EnergySourceName(code);
}

// "measured: RAPL", or for a batch size whose epochs' energy came from several sources
// (a GPU counter that failed in some epochs) "mixed: measured: NVML, the GPUs; estimated: ...".
std::string DescribeSources(const std::set<int>& sources) {
  std::vector<std::string> parts;
  for (int code : sources) parts.push_back(DescribeSource(code));
  return absl::StrCat(parts.size() > 1 ? "mixed: " : "", absl::StrJoin(parts, "; "));
}

// One line per batch size with its energy; empty when no row measured any.
std::string EnergyMarkdown(const std::vector<BatchSizeSummary>& summaries) {
  std::string md;
  for (const BatchSizeSummary& s : summaries) {
    if (s.energy_j <= 0) continue;
    absl::StrAppendFormat(&md, "- global batch %d: %.0f J (%.2f Wh) over %d samples, %.4f J/sample (%s)\n",
                          s.batch_size, s.energy_j, s.energy_j / 3600.0, s.samples,
                          s.samples > 0 ? s.energy_j / static_cast<double>(s.samples) : 0.0,
                          DescribeSources(s.energy_sources));
  }
  return md.empty() ? md : "\n## Energy\n\n" + md;
}

// One line per scored epoch; empty when none was scored. The judge's class scores where
// it scored (confidence >= 0), the KID where the epoch has one.
std::string QualityMarkdown(const std::vector<EpochRow>& rows) {
  std::string md;
  for (const EpochRow& r : rows) {
    if (r.quality_fd < 0) continue;
    absl::StrAppendFormat(&md, "- global batch %d epoch %d: Fréchet distance %.3f", r.batch_size, r.epoch,
                          r.quality_fd);
    if (r.quality_confidence >= 0) {
      absl::StrAppendFormat(&md, ", class entropy %.3f (per sample) / %.3f (of the mean), confidence %.3f",
                            r.quality_class_entropy, r.quality_marginal_entropy, r.quality_confidence);
    }
    if (std::isfinite(r.quality_kid)) absl::StrAppendFormat(&md, ", KID %.4g", r.quality_kid);
    md += "\n";
  }
  return md.empty() ? md
                    : "\n## Sample quality (lower Fréchet distance and KID, lower per-sample and higher "
                      "of-the-mean class entropy are better)\n\n" + md;
}

}  // namespace

std::string TimingMarkdown(const std::vector<EpochRow>& rows, int world_size, const std::string& precision) {
  const std::vector<BatchSizeSummary> summaries = SummarizeByBatchSize(rows);
  std::string md = absl::StrFormat("# Training time per batch size (%d rank%s, %s)\n\n", world_size,
                                   world_size == 1 ? "" : "s", precision);
  md += "| global batch | epochs | total s | s/epoch | samples/s | all-reduce share | total time vs smallest batch |\n";
  md += "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const BatchSizeSummary& s : summaries) {
    absl::StrAppendFormat(&md, "| %d | %d | %.1f | %.1f | %.1f | %.1f %% | %+.1f %% |\n", s.batch_size, s.epochs,
                          s.total_seconds, s.seconds_per_epoch, s.samples_per_s, 100.0 * s.allreduce_share,
                          100.0 * s.change_vs_smallest);
  }
  md += EnergyMarkdown(summaries);
  md += QualityMarkdown(rows);
  md += "\n## Per epoch\n\n| global batch | epoch | steps | s | steady ms/step | p50 ms | p99 ms | data wait ms "
        "| samples/s | all-reduce ms | exposed ms | stragglers | d_loss | g_loss | loss scale G/D | skipped G/D | peak RSS MiB "
        "| J |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const EpochRow& r : rows) {
    absl::StrAppendFormat(&md,
                          "| %d | %d | %d | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %d | %.4f | %.4f "
                          "| %g/%g | %d/%d | %.0f | %s |\n",
                          r.batch_size, r.epoch, r.steps, r.seconds, r.steady_step_ms, r.step_p50_ms, r.step_p99_ms,
                          r.data_wait_ms, r.samples_per_s, r.allreduce_ms, r.allreduce_exposed_ms, r.straggler_flags, r.d_loss, r.g_loss,
                          r.loss_scale_g, r.loss_scale_d, r.skipped_steps_g, r.skipped_steps_d, r.peak_rss_mb,
                          r.energy_j > 0 ? absl::StrFormat("%.0f%s", r.energy_j, r.energy_estimated ? " (est.)" : "")
                                         : std::string("-"));
  }
  return md;
}

}  // namespace gantry
