#include "worker/serve/serve_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_format.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_communicator.h"
#include "worker/serve/stop_signals.h"
#include "worker/train/shared_settings.h"

namespace gantry {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;

std::string FromEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Rank 0 logs to the console and the running job's log.txt; other ranks log warnings
// and errors to the console, tagged with their rank.
std::shared_ptr<JobLogSink> SetUpLogging(int rank) {
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stdout_color_sink_mt>()};
  std::shared_ptr<JobLogSink> job_log;
  if (rank == 0) {
    job_log = std::make_shared<JobLogSink>();
    sinks.push_back(job_log);
  }
  auto logger = std::make_shared<spdlog::logger>("gantry", sinks.begin(), sinks.end());
  logger->set_pattern(rank == 0 ? "[%Y-%m-%d %H:%M:%S.%e] [%l] %v"
                                : absl::StrFormat("[%%Y-%%m-%%d %%H:%%M:%%S.%%e] [rank %d] [%%l] %%v", rank));
  logger->set_level(rank == 0 ? spdlog::level::info : spdlog::level::warn);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return job_log;
}

absl::Status CheckOptions(const ServeOptions& o) {
  auto positive = [](double v) { return v > 0 && v < 1e6; };
  if (!positive(o.poll_seconds)) return absl::InvalidArgumentError("--poll-seconds: a positive number of seconds");
  if (!positive(o.report_seconds)) return absl::InvalidArgumentError("--report-seconds: a positive number of seconds");
  if (!positive(o.client.call_timeout_seconds)) {
    return absl::InvalidArgumentError("--rpc-timeout: a positive number of seconds");
  }
  if (!(o.plan_wait_seconds >= 0) || !(o.flush_seconds >= 0)) {
    return absl::InvalidArgumentError("--plan-wait-seconds, --flush-seconds: zero or more seconds");
  }
  if (o.max_jobs < 0) return absl::InvalidArgumentError("--max-jobs: 0 (no limit) or more");
  if (!positive(o.backoff.max_seconds)) return absl::InvalidArgumentError("--max-backoff: a positive number of seconds");
  return absl::OkStatus();
}

}  // namespace

ServeCommand::ServeCommand(CLI::App& app) {
  command_ = app.add_subcommand("serve", "join a worker pool: take training jobs from a gantry-coordinator");
  CoordinatorClientOptions& c = options_.client;
  command_->add_option("--coordinator", c.address, "the coordinator's HOST:PORT [default: $GANTRY_COORDINATOR]");
  command_->add_option("--token", c.token, "bearer token, or a file holding it [default: $GANTRY_TOKEN]");
  command_->add_option("--tls-ca", c.tls_ca, "PEM file of the CA that signed the coordinator's certificate");
  command_->add_flag("--tls", c.tls, "TLS with the system's CAs (implied by --tls-ca)");
  command_->add_option("--runs-dir", options_.runs_dir, "where rank 0 puts each job's run folder [default: runs]");
  command_->add_option("--name", options_.name, "the group's name at the coordinator [default: host and ranks]");
  command_->add_option("--max-jobs", options_.max_jobs, "exit (0) after this many jobs [default: 0, no limit]");
  command_->add_option("--poll-seconds", options_.poll_seconds, "long poll for work [default: 5]");
  command_->add_option("--report-seconds", options_.report_seconds, "progress report interval [default: 2]");
  command_->add_option("--plan-wait-seconds", options_.plan_wait_seconds,
                       "wait at an epoch start for the coordinator's shard plan [default: 2]");
  command_->add_option("--flush-seconds", options_.flush_seconds,
                       "time to deliver buffered reports when stopping [default: 5]");
  command_->add_option("--rpc-timeout", c.call_timeout_seconds, "deadline of each call [default: 10]");
  command_->add_option("--max-backoff", options_.backoff.max_seconds,
                       "longest wait between attempts to reach the coordinator [default: 10]");
}

int ServeCommand::Run(int* argc, char*** argv) {
  if (options_.client.address.empty()) options_.client.address = FromEnv("GANTRY_COORDINATOR");
  if (options_.client.token.empty()) options_.client.token = FromEnv("GANTRY_TOKEN");
  if (absl::Status s = CheckOptions(options_); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  options_.backoff.initial_seconds = std::min(options_.backoff.initial_seconds, options_.backoff.max_seconds);
  std::unique_ptr<MpiCommunicator> mpi;
  std::unique_ptr<Communicator> local;
  if (MpiCommunicator::LaunchedUnderMpi()) {
    absl::StatusOr<std::unique_ptr<MpiCommunicator>> created = MpiCommunicator::Create(argc, argv);
    if (!created.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(created.status().message()).c_str());
      return kExitFailure;
    }
    mpi = *std::move(created);
  } else {
    local = LocalGroup(1).Rank(0);
  }
  Communicator& comm = mpi ? static_cast<Communicator&>(*mpi) : *local;
  InstallStopSignalHandlers();
  std::shared_ptr<JobLogSink> job_log = SetUpLogging(comm.rank());

  // Rank 0 alone talks to the coordinator; its flags are the ones that count.
  std::unique_ptr<GrpcCoordinatorClient> client;
  absl::Status connect_status;
  if (comm.rank() == 0) {
    absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> created = GrpcCoordinatorClient::Create(options_.client);
    connect_status = created.status();
    if (created.ok()) client = *std::move(created);
  }
  CommOptions start_up;
  start_up.timeout_seconds = 120;
  absl::StatusOr<bool> agreed = AllRanksOk(comm, connect_status.ok(), start_up);
  if (!agreed.ok() || !*agreed) {
    if (!connect_status.ok()) std::fprintf(stderr, "error: %s\n", std::string(connect_status.message()).c_str());
    return kExitUsage;
  }
  // The way out after a failure mid-job: the other threads are still running, so no
  // destructors run on the way out.
  auto abort_group = [&](int code) {
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    if (mpi && comm.size() > 1) mpi->Abort(code);
    _exit(code);
  };
  ServeLoop loop(comm, client.get(), options_, job_log.get(), abort_group);
  return loop.Run();
}

}  // namespace gantry
