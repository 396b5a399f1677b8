// The port of a HOST:PORT address given on a command line (gantry-coordinator --listen,
// gantry and gantry-worker serve --coordinator). gRPC itself takes the port modulo
// 65536 or picks a random one for a number out of range, so a typo must be caught here.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace gantry {

enum class PortZero {
  kRefused,  // a client: port 0 names no server
  kAnyFree,  // a server: port 0 asks the system for any free port (tests, scripts)
};

// OK when `address` ends in ":PORT" with PORT a decimal number in 1..65535 (or 0 under
// PortZero::kAnyFree). An address whose text after the last ':' is not a (signed) number is
// left to gRPC (a Unix socket "unix:/path", an IPv6 literal without a port): only a port
// that is written but out of range is refused here. A host without any port ("127.0.0.1",
// "[::1]") is refused for a server (kAnyFree: gRPC would listen on 443 silently) and
// left to gRPC for a client (a name behind a TLS proxy on 443). INVALID_ARGUMENT naming
// `flag`, the address and the range.
absl::Status CheckAddressPort(absl::string_view flag, absl::string_view address, PortZero zero);

}  // namespace gantry
