// How `gantry` reaches the coordinator: the address, the token, TLS, and a deadline on
// every call. Values come from flags, else from GANTRY_COORDINATOR / GANTRY_TOKEN, else
// the defaults; a token that names a readable file is read from it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cli/request_text.h"
#include "gantry/v1/coordinator.grpc.pb.h"

namespace gantry::cli {

struct ConnectionFlags {
  std::string coordinator;  // host:port
  std::string token;        // the token, or a file holding it
  std::string tls_ca;       // PEM file of the CA that signed the coordinator's certificate
  bool tls = false;         // TLS with the system's CAs (implied by tls_ca)
  double timeout_seconds = 30;
  bool json = false;
};

constexpr char kDefaultCoordinator[] = "127.0.0.1:50051";

class Connection {
 public:
  // Fills unset flags from the environment and reads token and CA files.
  // INVALID_ARGUMENT naming the flag or variable when something is unreadable.
  static absl::StatusOr<Connection> Connect(ConnectionFlags flags);

  v1::Coordinator::Stub& stub() { return *stub_; }
  // A context carrying the token, with a deadline of `timeout_seconds` (default: the
  // --timeout flag) from now.
  std::unique_ptr<grpc::ClientContext> Context(double timeout_seconds = 0) const;
  // A unary call, `method` of the stub (e.g. &v1::Coordinator::Stub::GetJob), in a
  // fresh Context(); INVALID_ARGUMENT without calling when the request holds text that
  // is not UTF-8 (CheckRequestText).
  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (v1::Coordinator::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response) {
    if (absl::Status text = CheckRequestText(request); !text.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(text.message()));
    }
    return (stub_.get()->*method)(Context().get(), request, response);
  }
  const ConnectionFlags& flags() const { return flags_; }

 private:
  ConnectionFlags flags_;
  std::shared_ptr<v1::Coordinator::Stub> stub_;
};

}  // namespace gantry::cli
