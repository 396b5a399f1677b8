#include "worker/pool/coordinator_client.h"

#include <algorithm>
#include <chrono>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "channel/client_channel.h"
#include "channel/coordinator_target.h"
#include "common/status_macros.h"

namespace gantry {

absl::Status FromGrpc(const grpc::Status& status, const char* call) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(call, ": ", status.error_message()));
}

absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> GrpcCoordinatorClient::Create(
    CoordinatorClientOptions options) {
  absl::StatusOr<CoordinatorTarget> target =
      ResolveTarget({options.address, options.token, options.tls_ca, options.tls});
  if (!target.ok()) return target.status();
  options.address = target->address;
  options.token = target->token;
  // Reconnect quickly: a coordinator that restarts is found again within seconds.
  grpc::ChannelArguments args;
  const int reconnect_ms = static_cast<int>(options.reconnect_seconds * 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 200));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 200));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, reconnect_ms);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(*target, args);
  if (!channel.ok()) return channel.status();
  auto client = std::unique_ptr<GrpcCoordinatorClient>(new GrpcCoordinatorClient(options));
  client->stub_ = v1::Coordinator::NewStub(*channel);
  return client;
}

GrpcCoordinatorClient::GrpcCoordinatorClient(CoordinatorClientOptions options) : options_(std::move(options)) {
  if (options_.stopping) in_flight_ = std::make_unique<InFlightCalls>(options_.stopping, options_.stop_grace_seconds);
}

std::unique_ptr<grpc::ClientContext> GrpcCoordinatorClient::Context(double timeout_seconds) const {
  return CallContext(timeout_seconds, options_.token);
}

absl::Status GrpcCoordinatorClient::Call(const char* name, CallKind kind, double timeout_seconds,
                                         const std::function<grpc::Status(grpc::ClientContext*)>& call) {
  const std::unique_ptr<grpc::ClientContext> context = Context(timeout_seconds);
  if (in_flight_ != nullptr && !in_flight_->Begin(context.get(), kind)) {
    in_flight_->End(context.get());
    return absl::CancelledError(absl::StrCat(name, ": not sent, the pool is stopping"));
  }
  const grpc::Status status = call(context.get());
  if (in_flight_ != nullptr) in_flight_->End(context.get());
  return FromGrpc(status, name);
}

absl::StatusOr<v1::RegisterGroupResponse> GrpcCoordinatorClient::RegisterGroup(
    const v1::RegisterGroupRequest& request) {
  v1::RegisterGroupResponse response;
  RETURN_IF_ERROR(Call("RegisterGroup", CallKind::kWhileServing, options_.call_timeout_seconds,
                       [&](grpc::ClientContext* c) { return stub_->RegisterGroup(c, request, &response); }));
  return response;
}

absl::StatusOr<v1::AcquireJobResponse> GrpcCoordinatorClient::AcquireJob(const v1::AcquireJobRequest& request) {
  v1::AcquireJobResponse response;
  RETURN_IF_ERROR(Call("AcquireJob", CallKind::kWhileServing, request.wait_seconds() + options_.call_timeout_seconds,
                       [&](grpc::ClientContext* c) { return stub_->AcquireJob(c, request, &response); }));
  return response;
}

absl::StatusOr<v1::ReportProgressResponse> GrpcCoordinatorClient::ReportProgress(
    const v1::ReportProgressRequest& request) {
  v1::ReportProgressResponse response;
  RETURN_IF_ERROR(Call("ReportProgress", CallKind::kDelivery, options_.call_timeout_seconds,
                       [&](grpc::ClientContext* c) { return stub_->ReportProgress(c, request, &response); }));
  return response;
}

absl::StatusOr<v1::HeartbeatResponse> GrpcCoordinatorClient::Heartbeat(const v1::HeartbeatRequest& request,
                                                                       double timeout_seconds) {
  v1::HeartbeatResponse response;
  RETURN_IF_ERROR(Call("Heartbeat", CallKind::kDelivery, std::min(timeout_seconds, options_.call_timeout_seconds),
                       [&](grpc::ClientContext* c) { return stub_->Heartbeat(c, request, &response); }));
  return response;
}

}  // namespace gantry
