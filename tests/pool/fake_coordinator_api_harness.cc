#include "tests/pool/fake_coordinator_api.h"

namespace gantry::testing {

void FakeCoordinatorApi::FailReports(std::vector<absl::Status> errors) {
  absl::MutexLock lock(&mu_);
  report_errors_.insert(report_errors_.end(), errors.begin(), errors.end());
}

void FakeCoordinatorApi::FailHeartbeats(std::vector<absl::Status> errors) {
  absl::MutexLock lock(&mu_);
  heartbeat_errors_.insert(heartbeat_errors_.end(), errors.begin(), errors.end());
}

void FakeCoordinatorApi::SetReportReply(const v1::ReportProgressResponse& reply) {
  absl::MutexLock lock(&mu_);
  report_reply_ = reply;
}

void FakeCoordinatorApi::SetHeartbeatReply(const v1::HeartbeatResponse& reply) {
  absl::MutexLock lock(&mu_);
  heartbeat_reply_ = reply;
}

std::vector<v1::ReportProgressRequest> FakeCoordinatorApi::reports() {
  absl::MutexLock lock(&mu_);
  return reports_;
}

std::vector<v1::ReportProgressRequest> FakeCoordinatorApi::accepted_reports() {
  absl::MutexLock lock(&mu_);
  return accepted_;
}

int FakeCoordinatorApi::heartbeats() {
  absl::MutexLock lock(&mu_);
  return heartbeats_;
}

absl::StatusOr<v1::RegisterGroupResponse> FakeCoordinatorApi::RegisterGroup(const v1::RegisterGroupRequest&) {
  return absl::UnimplementedError("RegisterGroup: not scripted");
}

absl::StatusOr<v1::AcquireJobResponse> FakeCoordinatorApi::AcquireJob(const v1::AcquireJobRequest&) {
  return absl::UnimplementedError("AcquireJob: not scripted");
}

absl::StatusOr<v1::ReportProgressResponse> FakeCoordinatorApi::ReportProgress(
    const v1::ReportProgressRequest& request) {
  absl::MutexLock lock(&mu_);
  reports_.push_back(request);
  if (!report_errors_.empty()) {
    absl::Status error = report_errors_.front();
    report_errors_.pop_front();
    return error;
  }
  accepted_.push_back(request);
  return report_reply_;
}

absl::StatusOr<v1::HeartbeatResponse> FakeCoordinatorApi::Heartbeat(const v1::HeartbeatRequest&, double) {
  absl::MutexLock lock(&mu_);
  if (!heartbeat_errors_.empty()) {
    absl::Status error = heartbeat_errors_.front();
    heartbeat_errors_.pop_front();
    return error;
  }
  ++heartbeats_;
  return heartbeat_reply_;
}

}  // namespace gantry::testing
