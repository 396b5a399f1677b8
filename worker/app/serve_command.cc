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

ServeCommand::ServeCommand(CLI::App& app) {
  command_ = app.add_subcommand("serve", "join a worker pool: take training jobs from a gantry-coordinator");
  CoordinatorClientOptions& c = options_.client;
  command_->add_option("--coordinator", c.address, "the coordinator's HOST:PORT [default: $GANTRY_COORDINATOR]");
  command_->add_option("--token", c.token, "bearer token, or a file holding it [default: $GANTRY_TOKEN]");
  command_->add_option("--tls-ca", c.tls_ca, "PEM file of the CA that signed the coordinator's certificate");
  command_->add_flag("--tls", c.tls, "TLS with the system's CAs (implied by --tls-ca)");
  command_->add_option("--runs-dir", options_.runs_dir, "where rank 0 puts each job's run folder [default: runs]");
  command_->add_option("--name", options_.name, "the group's name at the coordinator [default: host and ranks]");
  // Every number bounded (serve_loop.h's ranges): no wait is unbounded and no loop spins.
  numbers_ = std::make_unique<NumberFlags>(command_);
  NumberFlags& n = *numbers_;
  n.Int("--max-jobs", &options_.max_jobs, kServeMaxJobs, "exit (0) after this many jobs [default: 0, no limit]");
  n.Real("--poll-seconds", &options_.poll_seconds, kServePollSeconds, "long poll for work [default: 5]");
  n.Real("--report-seconds", &options_.report_seconds, kServeReportSeconds, "progress report interval [default: 2]");
  n.Real("--plan-wait-seconds", &options_.plan_wait_seconds, kServePlanWaitSeconds,
         "wait at an epoch start for the coordinator's shard plan [default: 2]");
  n.Real("--flush-seconds", &options_.flush_seconds, kServeFlushSeconds,
         "time to deliver buffered reports when stopping; a stop ends the pool within this plus 5 s [default: 5]");
  n.Real("--rpc-timeout", &c.call_timeout_seconds, kServeRpcTimeoutSeconds, "deadline of each call [default: 10]");
  n.Real("--max-backoff", &options_.backoff.max_seconds, kServeMaxBackoffSeconds,
         "longest wait between attempts to reach the coordinator [default: 10]");
}

int ServeCommand::Run(int* argc, char*** argv) {
  absl::Status s = numbers_->Parse();
  if (s.ok()) s = CheckServeOptions(options_);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
    return kExitUsage;
  }
  options_.backoff.initial_seconds = std::min(options_.backoff.initial_seconds, options_.backoff.max_seconds);
  // After a stop signal every call to the coordinator ends within the flush time and a
  // second (in_flight_calls.h), so the pool ends in time whatever the coordinator does.
  options_.client.stopping = [] { return StopSignal() != 0; };
  options_.client.stop_grace_seconds = options_.flush_seconds;
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
