// A scripted CoordinatorApi for the pool's threads: answers reports and heartbeats with
// what the test queued (errors first, then successes) and records every request.
#pragma once

#include <deque>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "worker/pool/coordinator_api.h"

namespace gantry::testing {

class FakeCoordinatorApi final : public CoordinatorApi {
 public:
  // The next calls of each kind fail with these, in order; later calls succeed.
  void FailReports(std::vector<absl::Status> errors);
  void FailHeartbeats(std::vector<absl::Status> errors);
  // What successful replies carry.
  void SetReportReply(const v1::ReportProgressResponse& reply);
  void SetHeartbeatReply(const v1::HeartbeatResponse& reply);

  std::vector<v1::ReportProgressRequest> reports();  // every call, failed ones included
  std::vector<v1::ReportProgressRequest> accepted_reports();
  int heartbeats();

  absl::StatusOr<v1::RegisterGroupResponse> RegisterGroup(const v1::RegisterGroupRequest& request) override;
  absl::StatusOr<v1::AcquireJobResponse> AcquireJob(const v1::AcquireJobRequest& request) override;
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& request) override;
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request,
                                                  double timeout_seconds) override;

 private:
  absl::Mutex mu_;
  std::deque<absl::Status> report_errors_ ABSL_GUARDED_BY(mu_);
  std::deque<absl::Status> heartbeat_errors_ ABSL_GUARDED_BY(mu_);
  v1::ReportProgressResponse report_reply_ ABSL_GUARDED_BY(mu_);
  v1::HeartbeatResponse heartbeat_reply_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReportProgressRequest> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReportProgressRequest> accepted_ ABSL_GUARDED_BY(mu_);
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace gantry::testing
