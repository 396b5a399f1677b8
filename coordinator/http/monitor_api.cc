#include "coordinator/http/monitor_api.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/jobs/job_outlook.h"
#include "coordinator/http/metrics_series.h"
#include "common/prometheus_text.h"
#include "report/proto_json.h"
#include "report/state_names.h"

namespace gantry {
namespace {

nlohmann::json OutlookJson(const v1::Job& job) {
  const std::optional<JobOutlook> outlook = OutlookOf(job);
  if (!outlook) return nullptr;
  nlohmann::json j = {{"fraction_done", outlook->fraction_done}};
  j["eta_seconds"] = outlook->eta_seconds ? nlohmann::json(*outlook->eta_seconds) : nlohmann::json(nullptr);
  return j;
}

// The `state` parameter of /api/jobs: a state's name, or "" for every state.
absl::StatusOr<v1::JobState> ParseStateParameter(const std::string& name) {
  if (name.empty()) return v1::JOB_STATE_UNSPECIFIED;
  absl::StatusOr<v1::JobState> state = ParseJobState(name);
  if (!state.ok()) return absl::InvalidArgumentError(absl::StrCat("state: ", state.status().message()));
  return state;
}

}  // namespace

absl::StatusOr<nlohmann::json> MonitorApi::Jobs(const std::string& state, int page_size,
                                                const std::string& page_token) {
  v1::ListJobsRequest request;
  ASSIGN_OR_RETURN(v1::JobState parsed, ParseStateParameter(state));
  request.set_state(parsed);
  request.set_page_size(page_size);
  request.set_page_token(page_token);
  ASSIGN_OR_RETURN(v1::ListJobsResponse response, core_.ListJobs(request));
  nlohmann::json out = ToJsonValue(response);
  for (int i = 0; i < response.jobs_size(); ++i) out["jobs"][i]["outlook"] = OutlookJson(response.jobs(i));
  return out;
}

absl::StatusOr<nlohmann::json> MonitorApi::Job(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::JobReport report, core_.GetJobReport(job_id));
  nlohmann::json out = JobReportJsonValue(report);
  out["outlook"] = OutlookJson(report.job());
  std::map<int, std::pair<int64_t, double>> by_rank;  // rank -> events, largest ratio
  for (const v1::StragglerEvent& e : report.stragglers()) {
    auto& [events, max_ratio] = by_rank[e.rank()];
    ++events;
    max_ratio = std::max(max_ratio, e.ratio());
  }
  out["stragglers_by_rank"] = nlohmann::json::array();
  for (const auto& [rank, summary] : by_rank) {
    out["stragglers_by_rank"].push_back({{"rank", rank}, {"events", summary.first}, {"max_ratio", summary.second}});
  }
  absl::StatusOr<SampleGrid> grid = ReadNewestSampleGrid(report);
  out["sample_grid"] = grid.ok() ? nlohmann::json{{"batch_size", grid->batch_size}, {"epoch", grid->epoch}}
                                 : nlohmann::json(nullptr);
  absl::StatusOr<GeneratedGrid> generated = ReadNewestGeneratedGrid(report.job());
  out["generated_grid"] = generated.ok() ? nlohmann::json(generated->folder) : nlohmann::json(nullptr);
  out["rollout"] = ReadRunFolderFile(report.job().checkpoint().run_folder(), {"rollout.csv"}, kMaxRolloutCsvBytes).ok();
  return out;
}

nlohmann::json MonitorApi::Groups() { return ToJsonValue(core_.ListGroups()); }

absl::StatusOr<SampleGrid> MonitorApi::NewestSampleGrid(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::JobReport report, core_.GetJobReport(job_id));
  return ReadNewestSampleGrid(report);
}

absl::StatusOr<GeneratedGrid> MonitorApi::NewestGeneratedGrid(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, core_.GetJob(job_id));
  return ReadNewestGeneratedGrid(job);
}

absl::StatusOr<nlohmann::json> MonitorApi::Rollout(const std::string& job_id) {
  ASSIGN_OR_RETURN(v1::Job job, core_.GetJob(job_id));
  return ReadRolloutCurve(job);
}

absl::StatusOr<std::string> MonitorApi::MetricsText() {
  ASSIGN_OR_RETURN(const MetricsSnapshot snapshot, TakeMetricsSnapshot(core_));
  PrometheusText out;
  WriteMetricsSeries(snapshot, out);
  if (rpc_metrics_ != nullptr) rpc_metrics_->Write(out);
  return out.text();
}

}  // namespace gantry
