// gantry-coordinator: takes training runs over gRPC, queues them in a SQLite job store
// and hands them to worker groups.
//
//   gantry-coordinator --listen 127.0.0.1:50051 --db gantry.db [--data-root /srv/data]
//       [--data-root DIR2] [--token-file F] [--tls-cert C --tls-key K] [--lease-seconds S]
//       [--http-listen 127.0.0.1:8080]   (dashboard, JSON endpoints, /metrics)
//
// Exit codes: 0 after a clean shutdown on SIGINT or SIGTERM; 2 bad flags or a start-up
// problem (port in use, database not writable, data root missing), named on stderr.
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "common/exit_codes.h"
#include "common/output_file.h"
#include "coordinator/app/server.h"
#include "coordinator/app/wall_clock.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

struct CoordinatorFlags {
  ServerOptions options;
  std::string port_file, http_port_file;  // where to write the bound ports; empty: nowhere
};

void AddFlags(CLI::App& app, CoordinatorFlags& flags) {
  ServerOptions& options = flags.options;
  app.add_option("--listen", options.listen, "host:port to serve on; port 1..65535, or 0 for any free port (see --port-file)")
      ->default_val(options.listen);
  app.add_option("--db", options.db_path, "SQLite job database (created when missing)")->required();
  app.add_option("--data-root", options.data_roots,
                 "folder job data may come from; repeat for several (paths outside are refused); default: "
                 "Debian's dataset folder, which holds the Fashion-MNIST that scripts/install_deps.sh installs")
      ->default_val(kDefaultDataRoot);
  app.add_option("--token-file", options.token_file,
                 "file holding the bearer token every call must carry (no file: no authentication)");
  app.add_option("--tls-cert", options.tls_cert, "PEM server certificate (with --tls-key: serve TLS)");
  app.add_option("--tls-key", options.tls_key, "PEM private key of --tls-cert");
  app.add_option("--lease-seconds", options.lease_seconds,
                 "a group silent this long loses its job, which is queued again")
      ->default_val(options.lease_seconds);
  app.add_option("--max-attempts", options.max_attempts, "default times a job may be handed to a group")
      ->default_val(options.max_attempts);
  app.add_flag("--allow-debug-settings", options.allow_debug_settings,
               "accept jobs with debug switches (debug_slow_*, debug_inject_inf_*), which can stall or poison a whole "
               "pool: for tests and local experiments only");
  app.add_option("--port-file", flags.port_file,
                 "write the bound port here once serving (for scripts and tests); an existing file is replaced only "
                 "when it holds nothing but a port number, and never when it is the --db, token or TLS file");
  app.add_option("--http-listen", options.http_listen,
                 "host:port of the HTTP listener (dashboard, JSON endpoints, Prometheus /metrics; same token as "
                 "gRPC); off unless given; port 0 picks a free one (see --http-port-file)");
  app.add_option("--http-port-file", flags.http_port_file,
                 "write the bound HTTP port here once serving (replaces only what --port-file would)");
}

// The exit code when the command line is not one to run: 0 after --help, kExitUsage
// (with CLI11's message) when it does not parse; nullopt when it parsed.
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return std::nullopt;
}

// Blocks SIGINT and SIGTERM in this thread and every thread it starts from now on, so
// that only WaitForStopSignal takes them. Call before any thread starts.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Blocks until SIGINT or SIGTERM (blocked by BlockStopSignals).
int WaitForStopSignal(const sigset_t& signals) {
  while (true) {
    timespec timeout{1, 0};
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig == SIGINT || sig == SIGTERM) return sig;
  }
}

// What a port file (--port-file, --http-port-file) may replace: only a previous port
// file, and none of the coordinator's other files (common/output_file.h).
OutputFileRules PortFileRules(const CoordinatorFlags& flags, const char* flag) {
  const ServerOptions& o = flags.options;
  OutputFileRules rules{flag, {}, HoldsOnlyANumber};
  for (const char* beside : {"", "-wal", "-shm", "-journal", ".lock"}) rules.others.push_back({"--db", o.db_path + beside});
  rules.others.push_back({"--token-file", o.token_file});
  rules.others.push_back({"--tls-cert", o.tls_cert});
  rules.others.push_back({"--tls-key", o.tls_key});
  const bool http = std::string(flag) == "--http-port-file";
  rules.others.push_back(http ? std::make_pair(std::string("--port-file"), flags.port_file)
                              : std::make_pair(std::string("--http-port-file"), flags.http_port_file));
  return rules;
}

// Prints `status` (when not OK) and says whether it is OK.
bool Reported(const absl::Status& status) {
  if (!status.ok()) std::fprintf(stderr, "gantry-coordinator: %s\n", std::string(status.message()).c_str());
  return status.ok();
}

// The port files can be written (checked before serving, so a wrong path stops the start).
bool PortFilesWritable(const CoordinatorFlags& flags) {
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--port-file", flags.port_file},
                                   {"--http-port-file", flags.http_port_file}}) {
    if (!path.empty() && !Reported(CheckOutputFile(path, PortFileRules(flags, flag)).status())) return false;
  }
  return true;
}

// Writes `port` and a newline to `path` (nothing when `path` is empty); false, with the
// reason on stderr naming `flag`, when it cannot.
bool WritePortFile(const CoordinatorFlags& flags, const std::string& path, int port, const char* flag) {
  if (path.empty()) return true;
  return Reported(WriteOutputFile(path, std::to_string(port) + "\n", PortFileRules(flags, flag)));
}

// Serves until SIGINT or SIGTERM, then shuts down.
void ServeUntilStopped(CoordinatorServer& server, const ServerOptions& options, const sigset_t& signals) {
  if (server.http_port() > 0) spdlog::info("dashboard and /metrics on HTTP port {}", server.http_port());
  spdlog::info("gantry-coordinator serving on port {} (db {}, lease {} s{})", server.port(), options.db_path,
               options.lease_seconds, options.token_file.empty() ? ", no authentication" : ", token required");
  const int sig = WaitForStopSignal(signals);
  spdlog::info("{}: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  server.Shutdown();
  spdlog::info("stopped");
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  using namespace gantry;
  CLI::App app{"gantry-coordinator: queues GAN training runs and hands them to worker groups over gRPC"};
  CoordinatorFlags flags;
  AddFlags(app, flags);
  if (std::optional<int> code = Parse(app, argc, argv)) return *code;

  if (!PortFilesWritable(flags)) return kExitUsage;
  const sigset_t signals = BlockStopSignals();
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start(flags.options, Clock::Real(), UnixClock::Get());
  if (!server.ok()) {
    std::fprintf(stderr, "gantry-coordinator: %s\n", std::string(server.status().message()).c_str());
    return kExitUsage;
  }
  if (!WritePortFile(flags, flags.port_file, (*server)->port(), "--port-file") ||
      !WritePortFile(flags, flags.http_port_file, (*server)->http_port(), "--http-port-file")) {
    return kExitUsage;
  }
  ServeUntilStopped(**server, flags.options, signals);
  return 0;
}
