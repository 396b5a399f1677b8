#include "worker/pool/coordinator_client.h"

#include <algorithm>
#include <chrono>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "channel/client_channel.h"
#include "channel/coordinator_target.h"

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

std::unique_ptr<grpc::ClientContext> GrpcCoordinatorClient::Context(double timeout_seconds) const {
  return CallContext(timeout_seconds, options_.token);
}

absl::StatusOr<v1::RegisterGroupResponse> GrpcCoordinatorClient::RegisterGroup(
    const v1::RegisterGroupRequest& request) {
  v1::RegisterGroupResponse response;
  auto context = Context(options_.call_timeout_seconds);
  if (absl::Status s = FromGrpc(stub_->RegisterGroup(context.get(), request, &response), "RegisterGroup"); !s.ok()) {
    return s;
  }
  return response;
}

absl::StatusOr<v1::AcquireJobResponse> GrpcCoordinatorClient::AcquireJob(const v1::AcquireJobRequest& request) {
  v1::AcquireJobResponse response;
  auto context = Context(request.wait_seconds() + options_.call_timeout_seconds);
  if (absl::Status s = FromGrpc(stub_->AcquireJob(context.get(), request, &response), "AcquireJob"); !s.ok()) {
    return s;
  }
  return response;
}

absl::StatusOr<v1::ReportProgressResponse> GrpcCoordinatorClient::ReportProgress(
    const v1::ReportProgressRequest& request) {
  v1::ReportProgressResponse response;
  auto context = Context(options_.call_timeout_seconds);
  if (absl::Status s = FromGrpc(stub_->ReportProgress(context.get(), request, &response), "ReportProgress");
      !s.ok()) {
    return s;
  }
  return response;
}

absl::StatusOr<v1::HeartbeatResponse> GrpcCoordinatorClient::Heartbeat(const v1::HeartbeatRequest& request,
                                                                       double timeout_seconds) {
  v1::HeartbeatResponse response;
  auto context = Context(std::min(timeout_seconds, options_.call_timeout_seconds));
  if (absl::Status s = FromGrpc(stub_->Heartbeat(context.get(), request, &response), "Heartbeat"); !s.ok()) return s;
  return response;
}

}  // namespace gantry
