#include "worker/app/serve_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "common/exit_codes.h"
#include "spdlog/spdlog.h"
#include "worker/app/logging.h"
#include "worker/app/process_group.h"
#include "worker/pool/stop_signals.h"
#include "worker/run/shared_settings.h"

namespace gantry {
namespace {

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
  if (absl::Status s = CheckOptions(options_); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  options_.backoff.initial_seconds = std::min(options_.backoff.initial_seconds, options_.backoff.max_seconds);
  absl::StatusOr<ProcessGroup> group = ProcessGroup::Join(argc, argv);
  if (!group.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(group.status().message()).c_str());
    return kExitFailure;
  }
  Communicator& comm = group->comm();
  InstallStopSignalHandlers();
  const auto job_log = std::make_shared<JobLogSink>();
  SetUpWorkerLogging(comm.rank(), {job_log});

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
  ServeEnd end;
  {
    ServeLoop loop(comm, client.get(), options_, comm.rank() == 0 ? job_log.get() : nullptr);
    end = loop.Run();
  }
  if (end.abort_group) group->Exit(end.exit_code);
  return end.exit_code;
}

}  // namespace gantry
