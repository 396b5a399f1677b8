// What the dashboard and Prometheus read: the coordinator's state as JSON documents and
// as Prometheus text. Every read goes through the Coordinator's own methods (GetJob,
// ListJobs, GetJobReport, ListGroups: what the gRPC service answers), and every message
// is printed by report/proto_json.h, as `gantry --json` prints it; the documents only
// add what a page needs besides (progress fraction and ETA, stragglers by rank, whether
// a sample grid or rollout curve is there). Nothing here knows HTTP (http_server.h).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/service/rpc_metrics.h"
#include "coordinator/http/run_folder_files.h"
#include "nlohmann/json.hpp"

namespace gantry {

class MonitorApi {
 public:
  // `rpc_metrics` may be null (no RPC figures in /metrics). Both must outlive this.
  MonitorApi(Coordinator& core, const RpcMetrics* rpc_metrics) : core_(core), rpc_metrics_(rpc_metrics) {}

  // ListJobs as JSON: {"jobs": [job + "outlook"], "next_page_token": "..."}. `state` is a
  // state name ("running"; "" for all), `page_size` and `page_token` as in the gRPC call.
  absl::StatusOr<nlohmann::json> Jobs(const std::string& state, int page_size, const std::string& page_token);
  // GetJobReport as `gantry --json report` prints it, plus "outlook", "stragglers_by_rank"
  // ([{rank, events, max_ratio}]), "sample_grid" ({batch_size, epoch} of the newest
  // readable grid, or null), "generated_grid" (the newest generate folder with a readable
  // grid.png, or null) and "rollout" (true when a rollout curve can be read).
  absl::StatusOr<nlohmann::json> Job(const std::string& job_id);
  // ListGroups as JSON.
  nlohmann::json Groups();
  absl::StatusOr<SampleGrid> NewestSampleGrid(const std::string& job_id);
  // The newest generate folder's grid.png of the job's run folder (run_folder_files.h).
  absl::StatusOr<GeneratedGrid> NewestGeneratedGrid(const std::string& job_id);
  absl::StatusOr<nlohmann::json> Rollout(const std::string& job_id);
  // /metrics (docs/monitoring.md lists them).
  absl::StatusOr<std::string> MetricsText();

 private:
  Coordinator& core_;
  const RpcMetrics* rpc_metrics_;
};

}  // namespace gantry
