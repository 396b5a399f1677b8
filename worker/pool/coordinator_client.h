// CoordinatorApi over gRPC: the address, the bearer token, TLS, and a deadline on every
// call. The channel retries its connection quickly (at most every `reconnect_seconds`),
// so a coordinator that restarts is found again within seconds; backing off between
// calls is the callers' business (backoff.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gantry/v1/coordinator.grpc.pb.h"
#include "worker/pool/coordinator_api.h"
#include "worker/pool/in_flight_calls.h"

namespace gantry {

struct CoordinatorClientOptions {
  std::string address;          // host:port
  std::string token;            // the token itself, or a file holding it; empty: none
  std::string tls_ca;           // PEM file of the CA that signed the coordinator's certificate
  bool tls = false;             // TLS with the system's CAs (implied by tls_ca)
  double call_timeout_seconds = 10;
  double reconnect_seconds = 1;  // the channel's longest wait between connection attempts
  // Whether the pool is stopping (set: its calls end within a bound after that,
  // in_flight_calls.h), and how long reports may still be delivered then.
  std::function<bool()> stopping;
  double stop_grace_seconds = 5;
};

class GrpcCoordinatorClient final : public CoordinatorApi {
 public:
  // Fills the address and token from the environment when not given (ResolveTarget),
  // reads the token and CA files. INVALID_ARGUMENT naming the flag (--coordinator,
  // --token, --tls-ca) or variable when one is missing or unreadable.
  static absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> Create(CoordinatorClientOptions options);

  absl::StatusOr<v1::RegisterGroupResponse> RegisterGroup(const v1::RegisterGroupRequest& request) override;
  absl::StatusOr<v1::AcquireJobResponse> AcquireJob(const v1::AcquireJobRequest& request) override;
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& request) override;
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request,
                                                  double timeout_seconds) override;

  const CoordinatorClientOptions& options() const { return options_; }

 private:
  explicit GrpcCoordinatorClient(CoordinatorClientOptions options);
  std::unique_ptr<grpc::ClientContext> Context(double timeout_seconds) const;
  // Runs `call` on a fresh context of `timeout_seconds`, tracked as `kind` when stops
  // are (CANCELLED without calling when the pool is stopping and the call may not start).
  absl::Status Call(const char* name, CallKind kind, double timeout_seconds,
                    const std::function<grpc::Status(grpc::ClientContext*)>& call);

  CoordinatorClientOptions options_;  // token resolved to its value
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  std::unique_ptr<InFlightCalls> in_flight_;  // when options_.stopping is set
};

// The absl::Status of a gRPC status: same code, message prefixed with `call`.
absl::Status FromGrpc(const grpc::Status& status, const char* call);

}  // namespace gantry
