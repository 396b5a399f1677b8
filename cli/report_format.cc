#include "cli/report_format.h"

#include "absl/strings/str_format.h"
#include "cli/output.h"
#include "nlohmann/json.hpp"
#include "report/epoch_row_proto.h"
#include "report/time_to_target.h"
#include "report/timing_report.h"

namespace gantry::cli {
namespace {

std::vector<EpochRow> Rows(const v1::JobReport& report) {
  std::vector<EpochRow> rows;
  for (const v1::EpochMetrics& m : report.epochs()) rows.push_back(FromEpochMetrics(m));
  return rows;
}

int WorldSize(const v1::JobReport& report) {
  if (report.epochs_size() > 0 && report.epochs(0).world_size() > 0) return report.epochs(0).world_size();
  return std::max(report.job().world_size(), 1);
}

}  // namespace

std::string ReportMarkdown(const v1::JobReport& report) {
  std::string out = TimingMarkdown(Rows(report), WorldSize(report));
  const v1::RunSpec& spec = report.job().spec();
  if (auto goal = GoalOf(spec.target_fd().value(), spec.target_rel_l2().value())) {
    out += TimeToTargetMarkdown(Rows(report), *goal);
  }
  if (report.stragglers_size() > 0) {
    out += "\n## Straggler events\n\n| global batch | epoch | step | rank | rank ms | median ms | ratio |\n"
           "|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const v1::StragglerEvent& e : report.stragglers()) {
      absl::StrAppendFormat(&out, "| %d | %d | %d | %d | %.2f | %.2f | %.2fx |\n", e.batch_size(), e.epoch(), e.step(),
                            e.rank(), e.rank_compute_ms(), e.median_compute_ms(), e.ratio());
    }
  }
  return out;
}

std::string ReportCsv(const v1::JobReport& report) {
  std::string out = EpochCsvHeader() + "\n";
  for (const EpochRow& row : Rows(report)) out += EpochCsvLine(row) + "\n";
  return out;
}

std::string ReportJson(const v1::JobReport& report) { return DumpJson(JobReportJsonValue(report), 2); }

}  // namespace gantry::cli
