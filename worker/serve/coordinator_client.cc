#include "worker/serve/coordinator_client.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <grpcpp/grpcpp.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"

namespace gantry {
namespace {

absl::StatusOr<std::string> ReadText(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", bytes.status().message()));
  return std::string(bytes->begin(), bytes->end());
}

// A token given as a path is read from the file (keeping it out of `ps`); anything else
// is the token itself.
absl::StatusOr<std::string> ResolveToken(const std::string& given) {
  if (given.empty() || !std::filesystem::is_regular_file(given)) return given;
  absl::StatusOr<std::string> text = ReadText("--token", given);
  if (!text.ok()) return text.status();
  return std::string(absl::StripAsciiWhitespace(*text));
}

}  // namespace

absl::Status FromGrpc(const grpc::Status& status, const char* call) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(call, ": ", status.error_message()));
}

absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> GrpcCoordinatorClient::Create(
    CoordinatorClientOptions options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("--coordinator: give the coordinator's HOST:PORT (or set GANTRY_COORDINATOR)");
  }
  absl::StatusOr<std::string> token = ResolveToken(options.token);
  if (!token.ok()) return token.status();
  options.token = *token;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (options.tls || !options.tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls_ca.empty()) {
      absl::StatusOr<std::string> ca = ReadText("--tls-ca", options.tls_ca);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  const int reconnect_ms = static_cast<int>(options.reconnect_seconds * 1000);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 200));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 200));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, reconnect_ms);
  // Notice a coordinator that vanished while a long poll waits on it.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  auto client = std::unique_ptr<GrpcCoordinatorClient>(new GrpcCoordinatorClient(options));
  client->stub_ = v1::Coordinator::NewStub(grpc::CreateCustomChannel(options.address, credentials, args));
  return client;
}

std::unique_ptr<grpc::ClientContext> GrpcCoordinatorClient::Context(double timeout_seconds) const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
  if (!options_.token.empty()) context->AddMetadata("authorization", "Bearer " + options_.token);
  return context;
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
