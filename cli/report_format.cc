#include "cli/report_format.h"

#include "absl/strings/str_format.h"
#include "cli/output.h"
#include "nlohmann/json.hpp"
#include "report/epoch_row_proto.h"
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

std::string ReportJson(const v1::JobReport& report) {
  nlohmann::json j;
  j["job"] = ToJsonValue(report.job());
  j["epochs"] = nlohmann::json::array();
  for (const v1::EpochMetrics& m : report.epochs()) j["epochs"].push_back(ToJsonValue(m));
  j["summary"] = nlohmann::json::array();
  for (const BatchSizeSummary& s : SummarizeByBatchSize(Rows(report))) {
    j["summary"].push_back({{"batch_size", s.batch_size},
                            {"epochs", s.epochs},
                            {"total_seconds", s.total_seconds},
                            {"seconds_per_epoch", s.seconds_per_epoch},
                            {"samples_per_s", s.samples_per_s},
                            {"allreduce_share", s.allreduce_share},
                            {"change_vs_smallest", s.change_vs_smallest}});
  }
  j["stragglers"] = nlohmann::json::array();
  for (const v1::StragglerEvent& e : report.stragglers()) j["stragglers"].push_back(ToJsonValue(e));
  return DumpJson(j, 2);
}

}  // namespace gantry::cli
