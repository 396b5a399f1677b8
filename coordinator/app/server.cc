#include "coordinator/app/server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/file_io.h"
#include "common/host_port.h"
#include "common/pem_text.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

constexpr size_t kMaxPemBytes = 1 << 20;

absl::StatusOr<std::string> ReadPem(const char* flag, const std::string& path, PemContent kind) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path, kMaxPemBytes);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", bytes.status().message()));
  std::string text(bytes->begin(), bytes->end());
  RETURN_IF_ERROR(CheckPemText(text, kind, absl::StrCat(flag, " ", path)));
  return text;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key: give both (PEM files) or neither");
  }
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPem("--tls-cert", options.tls_cert, PemContent::kCertificates));
  ASSIGN_OR_RETURN(pair.private_key, ReadPem("--tls-key", options.tls_key, PemContent::kPrivateKey));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

absl::Status CheckOptions(const ServerOptions& options) {
  if (!(options.lease_seconds >= 0.1 && options.lease_seconds <= 86400)) {
    return absl::InvalidArgumentError(absl::StrCat("--lease-seconds ", options.lease_seconds, ": not in [0.1, 86400]"));
  }
  if (options.max_attempts < 1 || options.max_attempts > RequestBounds::kMaxAttempts) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-attempts ", options.max_attempts, ": not in [1, ", RequestBounds::kMaxAttempts, "]"));
  }
  if (options.db_path.empty()) return absl::InvalidArgumentError("--db: give the path of the job database");
  if (!options.http_listen.empty()) RETURN_IF_ERROR(CheckAddressPort("--http-listen", options.http_listen, PortZero::kAnyFree));
  // gRPC would take port 99999 modulo 65536, or pick a random one, without a word.
  return CheckAddressPort("--listen", options.listen, PortZero::kAnyFree);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(const ServerOptions& options,
                                                                             const Clock& monotonic,
                                                                             const Clock& wall) {
  RETURN_IF_ERROR(CheckOptions(options));
  ASSIGN_OR_RETURN(DataRoots roots, DataRoots::Create(options.data_roots));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, Credentials(options));
  std::unique_ptr<CoordinatorServer> server(new CoordinatorServer());
  if (!options.token_file.empty()) {
    ASSIGN_OR_RETURN(TokenAuth auth, TokenAuth::FromFile(options.token_file));
    server->auth_ = std::make_unique<TokenAuth>(std::move(auth));
  }
  // Before the database is opened at all: a second coordinator must not even migrate it.
  ASSIGN_OR_RETURN(DatabaseLock db_lock, DatabaseLock::Acquire(options.db_path, options.listen));
  server->db_lock_.emplace(std::move(db_lock));
  ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, JobStore::Open(options.db_path));
  server->validator_ = std::make_unique<SpecValidator>(std::move(roots), options.allow_debug_settings);
  CoordinatorOptions core_options;
  core_options.lease_seconds = options.lease_seconds;
  core_options.default_max_attempts = options.max_attempts;
  server->core_ = std::make_unique<Coordinator>(std::move(store), *server->validator_, core_options, monotonic, wall);
  RETURN_IF_ERROR(server->core_->Recover());
  server->service_ = std::make_unique<CoordinatorService>(*server->core_, server->auth_.get());

  // The standard grpc.health.v1.Health service, for Kubernetes' `grpc` probes and
  // grpc_health_probe. It must be switched on before the builder builds; it is not part
  // of CoordinatorService, so the token check never sees it (a probe sends no token).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which would let a second coordinator share the
  // port silently: a busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.AddListeningPort(options.listen, credentials, &server->port_);
  builder.RegisterService(server->service_.get());
  // Every call's count and latency by method, for /metrics.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RpcMetricsInterceptorFactory>(server->rpc_metrics_, monotonic));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("--listen ", options.listen,
                                               ": cannot listen there (is the port in use by another process, or "
                                               "the address not one of this machine's?)"));
  }
  server->db_lock_->SetAddress(
      absl::StrCat(options.listen.substr(0, options.listen.rfind(':')), ":", server->port_));
  // The store is open and recovered by now, so both names answer SERVING from the
  // first call: "" (the whole server) and the Coordinator service by its full name.
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  server->server_->GetHealthCheckService()->SetServingStatus(kCoordinatorHealthName, true);
  server->monitor_ = std::make_unique<MonitorApi>(*server->core_, &server->rpc_metrics_);
  if (!options.http_listen.empty()) {
    HttpOptions http;
    http.listen = options.http_listen;
    absl::StatusOr<std::unique_ptr<HttpServer>> started = HttpServer::Start(http, *server->monitor_, server->auth_.get());
    if (!started.ok()) {
      server->Shutdown();
      return started.status();
    }
    server->http_ = *std::move(started);
  }
  server->sweep_seconds_ = std::clamp(options.lease_seconds / 4, 0.05, 1.0);
  server->sweeper_ = std::thread([s = server.get()] { s->SweepLeases(); });
  return server;
}

void CoordinatorServer::SweepLeases() {
  while (!stop_.WaitForNotificationWithTimeout(absl::Seconds(sweep_seconds_))) {
    if (int lost = core_->ExpireLeases(); lost > 0) spdlog::warn("{} worker group(s) missed their lease", lost);
  }
}

void CoordinatorServer::Shutdown(double grace_seconds) {
  if (shut_down_) return;
  shut_down_ = true;
  // First of all, so that a readiness probe or a health watcher sees NOT_SERVING while
  // the long polls are woken and running calls finish.
  server_->GetHealthCheckService()->SetServingStatus(false);
  if (http_ != nullptr) http_->Shutdown();
  core_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(grace_seconds * 1000)));
  stop_.Notify();
  if (sweeper_.joinable()) sweeper_.join();
}

CoordinatorServer::~CoordinatorServer() {
  if (server_ != nullptr) Shutdown();
}

}  // namespace gantry
