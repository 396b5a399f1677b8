#include "channel/coordinator_target.h"

#include <cstdlib>

#include "channel/client_channel.h"
#include "common/host_port.h"

namespace gantry {
namespace {

std::string FromEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

absl::StatusOr<CoordinatorTarget> ResolveTarget(CoordinatorTarget given, const std::string& fallback_address) {
  const char* address_source = "--coordinator";
  if (given.address.empty()) {
    given.address = FromEnv("GANTRY_COORDINATOR");
    address_source = "GANTRY_COORDINATOR";
  }
  if (given.address.empty()) given.address = fallback_address;
  if (given.address.empty()) {
    return absl::InvalidArgumentError("--coordinator: give the coordinator's HOST:PORT (or set GANTRY_COORDINATOR)");
  }
  if (absl::Status port = CheckAddressPort(address_source, given.address, PortZero::kRefused); !port.ok()) return port;
  const char* token_source = "--token";
  if (given.token.empty()) {
    given.token = FromEnv("GANTRY_TOKEN");
    token_source = "GANTRY_TOKEN";
  }
  absl::StatusOr<std::string> token = ResolveToken(given.token, token_source);
  if (!token.ok()) return token.status();
  given.token = *std::move(token);
  return given;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const CoordinatorTarget& target,
                                                          grpc::ChannelArguments args) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ClientCredentials(target.tls, target.tls_ca);
  if (!credentials.ok()) return credentials.status();
  SetClientKeepalive(args);  // notice a coordinator that vanished during a long poll or watch
  return grpc::CreateCustomChannel(target.address, *credentials, args);
}

}  // namespace gantry
