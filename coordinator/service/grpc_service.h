// The Coordinator gRPC service: checks the caller's token, hands each call to the
// Coordinator, and turns its absl::Status into a grpc::Status (the codes are the same
// canonical codes). No logic of its own beyond streaming WatchJob.
#pragma once

#include "coordinator/jobs/coordinator.h"
#include "coordinator/service/token_auth.h"
#include "gantry/v1/coordinator.grpc.pb.h"

namespace gantry {

grpc::Status ToGrpcStatus(const absl::Status& status);

class CoordinatorService final : public v1::Coordinator::Service {
 public:
  // `auth` may be null (no --token-file): every call is then accepted.
  CoordinatorService(Coordinator& core, const TokenAuth* auth) : core_(core), auth_(auth) {}

  grpc::Status SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request, v1::Job* reply) override;
  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request, v1::Job* reply) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* reply) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request, v1::Job* reply) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const v1::WatchJobRequest* request,
                        grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status GetJobReport(grpc::ServerContext* context, const v1::GetJobReportRequest* request,
                            v1::JobReport* reply) override;
  grpc::Status ListGroups(grpc::ServerContext* context, const v1::ListGroupsRequest* request,
                          v1::ListGroupsResponse* reply) override;
  grpc::Status RegisterGroup(grpc::ServerContext* context, const v1::RegisterGroupRequest* request,
                             v1::RegisterGroupResponse* reply) override;
  grpc::Status AcquireJob(grpc::ServerContext* context, const v1::AcquireJobRequest* request,
                          v1::AcquireJobResponse* reply) override;
  grpc::Status ReportProgress(grpc::ServerContext* context, const v1::ReportProgressRequest* request,
                              v1::ReportProgressResponse* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* reply) override;

 private:
  absl::Status Authorize(const grpc::ServerContext& context) const;

  Coordinator& core_;
  const TokenAuth* auth_;
};

}  // namespace gantry
