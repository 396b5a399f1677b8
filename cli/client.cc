#include "cli/client.h"

#include <cstdlib>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "coordinator/client_channel.h"

namespace gantry::cli {
namespace {

std::string FromEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

absl::StatusOr<Client> Client::Connect(ClientFlags flags) {
  if (flags.coordinator.empty()) flags.coordinator = FromEnv("GANTRY_COORDINATOR");
  if (flags.coordinator.empty()) flags.coordinator = kDefaultCoordinator;
  if (flags.token.empty()) flags.token = FromEnv("GANTRY_TOKEN");
  absl::StatusOr<std::string> token = ResolveToken(flags.token);
  if (!token.ok()) return token.status();
  flags.token = *token;
  if (!(flags.timeout_seconds > 0)) return absl::InvalidArgumentError("--timeout: must be a positive number of seconds");

  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = ClientCredentials(flags.tls, flags.tls_ca);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  SetClientKeepalive(args);  // notice a coordinator that went away during a long watch
  Client client;
  client.flags_ = flags;
  client.stub_ = v1::Coordinator::NewStub(grpc::CreateCustomChannel(flags.coordinator, *credentials, args));
  return client;
}

std::unique_ptr<grpc::ClientContext> Client::Context(double timeout_seconds) const {
  return CallContext(timeout_seconds > 0 ? timeout_seconds : flags_.timeout_seconds, flags_.token);
}

}  // namespace gantry::cli
