// gantry-coordinator as a running server: the store, the Coordinator, the gRPC service
// on its listening address (TLS when a certificate is given), the standard gRPC health
// service (grpc.health.v1.Health, no token needed), and a sweeper thread that expires
// leases; with --http-listen, the HTTP listener beside it (dashboard, JSON, /metrics;
// http_server.h). Start() reports every start-up problem as a status naming the flag.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "coordinator/jobs/coordinator.h"
#include "coordinator/store/database_lock.h"
#include "coordinator/service/grpc_service.h"
#include "coordinator/http/http_server.h"
#include "coordinator/http/monitor_api.h"
#include "coordinator/service/rpc_metrics.h"
#include "coordinator/validation/spec_validator.h"
#include "coordinator/service/token_auth.h"

namespace grpc {
class Server;
}

namespace gantry {

// The name under which the health service reports the Coordinator service
// (grpc.health.v1.Health/Check with this `service`); "" stands for the whole server.
inline constexpr char kCoordinatorHealthName[] = "gantry.v1.Coordinator";

// Where Debian's dataset packages install (dataset-fashion-mnist: fashion-mnist/ inside):
// the data root when none is given.
inline constexpr char kDefaultDataRoot[] = "/usr/share/datasets";

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // host:port, port 1..65535; port 0 picks a free one
  std::string db_path;
  std::vector<std::string> data_roots;  // --data-root; gantry-coordinator's default: kDefaultDataRoot
  std::string token_file;                  // empty: no authentication
  std::string tls_cert, tls_key;           // PEM files; both or neither
  double lease_seconds = 30;
  int max_attempts = 3;
  int max_message_bytes = 4 << 20;
  bool allow_debug_settings = false;       // accept jobs with debug switches (SpecValidator)
  std::string http_listen;                 // HOST:PORT of the HTTP listener; empty: none
};

class CoordinatorServer {
 public:
  // The clocks must outlive the server.
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(const ServerOptions& options,
                                                                  const Clock& monotonic, const Clock& wall);
  ~CoordinatorServer();

  int port() const { return port_; }
  int http_port() const { return http_ == nullptr ? 0 : http_->port(); }  // 0: no HTTP listener
  int http_open_connections() { return http_ == nullptr ? 0 : http_->open_connections(); }
  Coordinator& coordinator() { return *core_; }

  // Stops taking calls, wakes long polls and watchers, lets running calls finish for
  // up to `grace_seconds`, and stops the sweeper. Idempotent. (gRPC waits out the whole
  // grace period while a client keeps an idle connection open, so keep it short: every
  // call either ends within milliseconds or is a wait that Shutdown wakes.)
  void Shutdown(double grace_seconds = 1);

 private:
  CoordinatorServer() = default;
  void SweepLeases();

  std::optional<DatabaseLock> db_lock_;  // held for the server's life: one process owns --db
  std::unique_ptr<SpecValidator> validator_;
  std::unique_ptr<TokenAuth> auth_;
  std::unique_ptr<Coordinator> core_;
  std::unique_ptr<CoordinatorService> service_;
  RpcMetrics rpc_metrics_;
  std::unique_ptr<MonitorApi> monitor_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<grpc::Server> server_;
  std::thread sweeper_;
  absl::Notification stop_;
  double sweep_seconds_ = 1;
  int port_ = 0;
  bool shut_down_ = false;
};

}  // namespace gantry
