#include "cli/connection.h"

#include <grpcpp/grpcpp.h>

#include "channel/client_channel.h"
#include "channel/coordinator_target.h"

namespace gantry::cli {

absl::StatusOr<Connection> Connection::Connect(ConnectionFlags flags) {
  absl::StatusOr<CoordinatorTarget> target =
      ResolveTarget({flags.coordinator, flags.token, flags.tls_ca, flags.tls}, kDefaultCoordinator);
  if (!target.ok()) return target.status();
  if (!(flags.timeout_seconds > 0)) return absl::InvalidArgumentError("--timeout: must be a positive number of seconds");
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(*target);
  if (!channel.ok()) return channel.status();
  flags.coordinator = target->address;
  flags.token = target->token;
  Connection client;
  client.flags_ = flags;
  client.stub_ = v1::Coordinator::NewStub(*channel);
  return client;
}

std::unique_ptr<grpc::ClientContext> Connection::Context(double timeout_seconds) const {
  return CallContext(timeout_seconds > 0 ? timeout_seconds : flags_.timeout_seconds, flags_.token);
}

}  // namespace gantry::cli
