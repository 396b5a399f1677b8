#include "coordinator/service/grpc_service.h"

#include <functional>

#include "absl/strings/str_cat.h"

namespace gantry {
namespace {

constexpr int kWatchBatch = 256;
constexpr double kWatchPollSeconds = 1.0;  // bounds each wait; client cancellation is seen this fast

template <typename Message>
grpc::Status Respond(const absl::StatusOr<Message>& result, Message* reply) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *reply = *result;
  return grpc::Status::OK;
}

v1::JobEvent ProgressEvent(const v1::Job& job, int64_t sequence) {
  v1::JobEvent event;
  event.set_job_id(job.id());
  event.set_sequence(sequence);
  event.set_unix_ms(job.updated_unix_ms());
  *event.mutable_progress() = job.progress();
  return event;
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status CoordinatorService::Authorize(const grpc::ServerContext& context) const {
  if (auth_ == nullptr) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return auth_->Check(std::nullopt);
  return auth_->Check(std::string_view(it->second.data(), it->second.size()));
}

#define GANTRY_AUTHORIZE(context)                                               \
  if (absl::Status auth_status = Authorize(*(context)); !auth_status.ok()) {    \
    return ToGrpcStatus(auth_status);                                           \
  }

grpc::Status CoordinatorService::SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request,
                                           v1::Job* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.SubmitJob(*request), reply);
}

grpc::Status CoordinatorService::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                        v1::Job* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.GetJob(request->job_id()), reply);
}

grpc::Status CoordinatorService::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                                          v1::ListJobsResponse* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.ListJobs(*request), reply);
}

grpc::Status CoordinatorService::CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                                           v1::Job* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.CancelJob(request->job_id()), reply);
}

grpc::Status CoordinatorService::GetJobReport(grpc::ServerContext* context, const v1::GetJobReportRequest* request,
                                              v1::JobReport* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.GetJobReport(request->job_id()), reply);
}

grpc::Status CoordinatorService::ListGroups(grpc::ServerContext* context, const v1::ListGroupsRequest*,
                                            v1::ListGroupsResponse* reply) {
  GANTRY_AUTHORIZE(context);
  *reply = core_.ListGroups();
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::RegisterGroup(grpc::ServerContext* context, const v1::RegisterGroupRequest* request,
                                               v1::RegisterGroupResponse* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.RegisterGroup(*request), reply);
}

grpc::Status CoordinatorService::AcquireJob(grpc::ServerContext* context, const v1::AcquireJobRequest* request,
                                            v1::AcquireJobResponse* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.AcquireJob(*request), reply);
}

grpc::Status CoordinatorService::ReportProgress(grpc::ServerContext* context,
                                                const v1::ReportProgressRequest* request,
                                                v1::ReportProgressResponse* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.ReportProgress(*request), reply);
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                           v1::HeartbeatResponse* reply) {
  GANTRY_AUTHORIZE(context);
  return Respond(core_.Heartbeat(*request), reply);
}

// The history after the requested entry, then live entries until the job ends. Each
// round notes the job's change counter before reading, so a change that lands while it reads
// ends the next wait at once.
grpc::Status CoordinatorService::WatchJob(grpc::ServerContext* context, const v1::WatchJobRequest* request,
                                          grpc::ServerWriter<v1::JobEvent>* writer) {
  GANTRY_AUTHORIZE(context);
  int64_t sequence = std::max<int64_t>(request->after_sequence(), 0);
  std::string progress_sent;
  bool ended = false;
  while (true) {
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    if (core_.shutting_down()) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          absl::StrCat("coordinator shutting down; watch again after sequence ", sequence));
    }
    const uint64_t seen = core_.JobVersion(request->job_id());
    absl::StatusOr<std::vector<v1::JobEvent>> events = core_.EventsAfter(request->job_id(), sequence, kWatchBatch);
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const v1::JobEvent& event : *events) {
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
      sequence = event.sequence();
    }
    if (events->size() == kWatchBatch) continue;
    absl::StatusOr<v1::Job> job = core_.GetJob(request->job_id());
    if (!job.ok()) return ToGrpcStatus(job.status());
    // The job may have ended after the read above: one more round sends its last entries.
    if (IsTerminal(job->state())) {
      if (ended) return grpc::Status::OK;
      ended = true;
      continue;
    }
    if (job->has_progress() && job->progress().SerializeAsString() != progress_sent) {
      progress_sent = job->progress().SerializeAsString();
      if (!writer->Write(ProgressEvent(*job, sequence))) return grpc::Status::CANCELLED;
    }
    core_.WaitForJobChange(request->job_id(), seen, kWatchPollSeconds);
  }
}

}  // namespace gantry
