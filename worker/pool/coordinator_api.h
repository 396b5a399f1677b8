// The worker group's side of the Coordinator service (proto/gantry/v1), as the pool
// mode uses it: an interface, so the pool's threads can be tested against a fake, with
// GrpcCoordinatorClient (coordinator_client.h) as the real one.
//
// Every call is bounded: it returns within its deadline with the coordinator's answer or
// an error (UNAVAILABLE while the coordinator cannot be reached, DEADLINE_EXCEEDED when
// it did not answer in time). Implementations are safe to call from several threads.
#pragma once

#include "absl/status/statusor.h"
#include "gantry/v1/coordinator.pb.h"

namespace gantry {

class CoordinatorApi {
 public:
  virtual ~CoordinatorApi() = default;

  virtual absl::StatusOr<v1::RegisterGroupResponse> RegisterGroup(const v1::RegisterGroupRequest& request) = 0;
  // Waits up to request.wait_seconds on the server, plus the usual call deadline.
  virtual absl::StatusOr<v1::AcquireJobResponse> AcquireJob(const v1::AcquireJobRequest& request) = 0;
  virtual absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& request) = 0;
  // `timeout_seconds` bounds this call (a heartbeat must not outlive its interval).
  virtual absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request,
                                                          double timeout_seconds) = 0;
};

}  // namespace gantry
