// Where the coordinator is and how a client proves who it is: what `gantry` and
// `gantry-worker serve` take as --coordinator, --token, --tls-ca and --tls, with the
// environment (GANTRY_COORDINATOR, GANTRY_TOKEN) filling what no flag gave. These two
// functions are the only readers of those variables.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gantry {

struct CoordinatorTarget {
  std::string address;  // host:port
  std::string token;    // the token, or a file holding it (ResolveTarget reads it)
  std::string tls_ca;   // PEM file of the CA that signed the coordinator's certificate
  bool tls = false;     // TLS with the system's CAs (implied by tls_ca)
};

// `given` with GANTRY_COORDINATOR for an empty address (then `fallback_address`, when not
// empty), GANTRY_TOKEN for an empty token, and the token read from its file and cleaned
// (ResolveToken). INVALID_ARGUMENT naming the flag or variable: no address at all, a
// port out of 1..65535, an unreadable token file, a token that is not printable ASCII.
absl::StatusOr<CoordinatorTarget> ResolveTarget(CoordinatorTarget given, const std::string& fallback_address = "");

// A channel to a resolved target: its credentials (TLS when asked), keepalive pings, and
// whatever `args` adds. INVALID_ARGUMENT naming --tls-ca when the CA file is unreadable.
absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenChannel(const CoordinatorTarget& target,
                                                          grpc::ChannelArguments args = {});

}  // namespace gantry
