#include "worker/pool/serve_loop.h"

#include <csignal>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/exit_codes.h"
#include "common/status_macros.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"
#include "spdlog/spdlog.h"
#include "worker/comm/gather_strings.h"
#include "worker/pool/pool_observer.h"
#include "worker/pool/stop_signals.h"
#include "worker/train/training_device.h"

namespace gantry {
namespace {

std::string SignalName(int signal) {
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == SIGINT) return "SIGINT";
  return absl::StrCat("signal ", signal);
}

// The job's --comm-timeout (the default when its spec does not resolve).
double CommTimeoutSeconds(const v1::Job& job) {
  const absl::StatusOr<TrainConfig> config = ResolveTrainConfig(RunSpecToSettings(job.spec()));
  return config.ok() ? config->comm_timeout_seconds : TrainConfig{}.comm_timeout_seconds;
}

// The other ranks wait for rank 0's plan in a collective bounded by the job's
// --comm-timeout: rank 0 waits for the coordinator's plan a quarter of that at most.
double PlanWaitSeconds(const v1::Job& job, double configured) {
  return std::min(configured, CommTimeoutSeconds(job) / 4);
}

// Sleeps up to `seconds`, in slices, until a stop signal comes.
void SleepUnlessStopped(double seconds) {
  const absl::Time end = absl::Now() + absl::Seconds(seconds);
  while (StopSignal() == 0 && absl::Now() < end) absl::SleepFor(std::min(absl::Milliseconds(100), end - absl::Now()));
}

PoolCommand StopCommand(int exit_code) {
  PoolCommand stop;
  stop.kind = PoolCommand::kStop;
  stop.exit_code = exit_code;
  return stop;
}

}  // namespace

absl::Status CheckServeOptions(const ServeOptions& o) {
  RETURN_IF_ERROR(CheckIntIn("--max-jobs", o.max_jobs, kServeMaxJobs));
  const std::pair<const char*, std::pair<double, const RealRange*>> durations[] = {
      {"--poll-seconds", {o.poll_seconds, &kServePollSeconds}},
      {"--report-seconds", {o.report_seconds, &kServeReportSeconds}},
      {"--plan-wait-seconds", {o.plan_wait_seconds, &kServePlanWaitSeconds}},
      {"--flush-seconds", {o.flush_seconds, &kServeFlushSeconds}},
      {"--rpc-timeout", {o.client.call_timeout_seconds, &kServeRpcTimeoutSeconds}},
      {"--max-backoff", {o.backoff.max_seconds, &kServeMaxBackoffSeconds}}};
  for (const auto& [flag, value] : durations) RETURN_IF_ERROR(CheckRealIn(flag, value.first, *value.second));
  return absl::OkStatus();
}

// Rank 0's state of the job it runs or has just run, until the coordinator has its end.
struct ServeLoop::ActiveJob {
  ActiveJob(CoordinatorApi& api, const std::string& group_id, const v1::AcquireJobResponse& job,
            const ServeOptions& options, const std::string& host)
      : control(std::make_shared<JobControl>(job.job().id(), job.job().attempts())),
        sender(api, group_id, buffer, *control,
               ReportSenderOptions{.interval_seconds = options.report_seconds, .backoff = options.backoff}),
        observer(buffer, sender, *control, PlanWaitSeconds(job.job(), options.plan_wait_seconds), host,
                 job.job().checkpoint()) {
    control->AddPlan(job.plan());
  }
  std::shared_ptr<JobControl> control;
  ReportBuffer buffer;
  ReportSender sender;  // declared after what it uses, so it stops first
  PoolObserver observer;
};

ServeLoop::ServeLoop(Communicator& comm, CoordinatorApi* api, ServeOptions options, JobLogSink* log_sink)
    : comm_(comm),
      api_(api),
      options_(std::move(options)),
      runner_(comm, options_.runs_dir, log_sink),
      register_backoff_(Clock::Real(), options_.backoff, static_cast<uint64_t>(getpid())),
      acquire_backoff_(Clock::Real(), options_.backoff, static_cast<uint64_t>(getpid()) + 1) {}

ServeLoop::~ServeLoop() {
  active_.reset();
  heartbeat_.reset();
}

double ServeLoop::round_timeout_seconds() const {
  // Rank 0's longest round: a long poll plus a call's deadline; then a margin.
  return options_.poll_seconds + options_.client.call_timeout_seconds + 30;
}

ServeEnd ServeLoop::Run() {
  // A collective that failed leaves the ranks in different places.
  constexpr ServeEnd kOutOfStep{.exit_code = kExitFailure, .abort_group = true};
  CommOptions round;
  round.timeout_seconds = round_timeout_seconds();
  absl::StatusOr<std::vector<std::string>> hosts = GatherHostNames(comm_, round);
  if (!hosts.ok()) {
    spdlog::error("{}", std::string(hosts.status().message()));
    return kOutOfStep;
  }
  hosts_ = *hosts;
  absl::StatusOr<std::vector<std::string>> devices = GatherStrings(comm_, DescribeRankDevice(comm_), 0, round);
  if (!devices.ok()) {
    spdlog::error("{}", std::string(devices.status().message()));
    return kOutOfStep;
  }
  devices_ = *devices;
  while (true) {
    const PoolCommand mine = is_root() ? LeaderRound() : PoolCommand{};
    absl::StatusOr<PoolCommand> command = ShareCommand(comm_, mine, StopSignal() != 0, round);
    if (!command.ok()) {
      spdlog::error("the pool's ranks lost each other between jobs: {}", std::string(command.status().message()));
      return kOutOfStep;
    }
    if (command->kind == PoolCommand::kStop) return Stop(*command);
    round.timeout_seconds = round_timeout_seconds();
    if (command->kind == PoolCommand::kRunJob) {
      RunJob(command->job);
      // After the job's last collective rank 0 still writes the run folder's last files
      // (the final checkpoint, plots, timing; tens of seconds under emulation) while the
      // others already wait here: the round after a job also allows its --comm-timeout.
      round.timeout_seconds += CommTimeoutSeconds(command->job.job());
    }
    if (out_of_step_) return kOutOfStep;
  }
}

PoolCommand ServeLoop::LeaderRound() {
  if (StopSignal() != 0) return {};  // ShareCommand turns the round into a stop
  if (active_) {
    // In slices, so a stop signal is seen within one.
    const absl::Time end = absl::Now() + absl::Seconds(options_.poll_seconds);
    bool drained = false;
    while (!drained && StopSignal() == 0 && absl::Now() < end) {
      drained = active_->sender.WaitDrained(std::min(0.1, absl::ToDoubleSeconds(end - absl::Now())));
    }
    if (drained || active_->control->gone()) FinishActiveJob();
    return {};
  }
  if (options_.max_jobs > 0 && jobs_done_ >= options_.max_jobs) {
    spdlog::info("served {} job(s) (--max-jobs); stopping", jobs_done_);
    return StopCommand(0);
  }
  if (group_id_.empty() || group_unknown_ || (heartbeat_ && heartbeat_->group_unknown())) return Register();
  return Acquire();
}

void ServeLoop::Pause(Backoff& backoff) {
  const double wait = std::min(backoff.SecondsUntilReady(), options_.poll_seconds);
  if (wait > 0) SleepUnlessStopped(wait);
}

PoolCommand ServeLoop::Register() {
  if (!register_backoff_.Ready()) {
    Pause(register_backoff_);
    return {};
  }
  v1::RegisterGroupRequest request;
  request.set_world_size(comm_.size());
  for (const std::string& host : hosts_) request.add_hosts(host);
  for (const std::string& device : devices_) request.add_devices(device);
  request.set_name(options_.name.empty() ? absl::StrCat("gantry-worker on ", hosts_.front(), " (", comm_.size(),
                                                        comm_.size() == 1 ? " rank)" : " ranks)")
                                         : options_.name);
  absl::StatusOr<v1::RegisterGroupResponse> reply = api_->RegisterGroup(request);
  if (!reply.ok()) {
    const absl::Status& s = reply.status();
    if (absl::IsUnauthenticated(s) || absl::IsPermissionDenied(s) || absl::IsInvalidArgument(s)) {
      spdlog::error("the coordinator at {} refused the group: {} (check --token and --tls-ca)",
                    options_.client.address, std::string(s.message()));
      return StopCommand(kExitUsage);
    }
    if (register_backoff_.failures() == 0) {
      spdlog::warn("cannot register with the coordinator at {}: {}; retrying with backoff", options_.client.address,
                   std::string(s.message()));
    }
    register_backoff_.RecordFailure();
    return {};
  }
  register_backoff_.RecordSuccess();
  group_id_ = reply->group_id();
  group_unknown_ = false;
  if (heartbeat_) {
    heartbeat_->SetGroup(group_id_);
  } else {
    heartbeat_ = std::make_unique<HeartbeatThread>(*api_, group_id_, reply->lease_seconds());
  }
  spdlog::info("registered with {} as {} ({} rank(s) on {}, devices {}; lease {:.1f} s); waiting for jobs",
               options_.client.address, group_id_, comm_.size(), absl::StrJoin(hosts_, ", "),
               absl::StrJoin(devices_, ", "), reply->lease_seconds());
  return {};
}

PoolCommand ServeLoop::Acquire() {
  if (!acquire_backoff_.Ready()) {
    Pause(acquire_backoff_);
    return {};
  }
  v1::AcquireJobRequest request;
  request.set_group_id(group_id_);
  request.set_wait_seconds(options_.poll_seconds);
  absl::StatusOr<v1::AcquireJobResponse> reply = api_->AcquireJob(request);
  if (!reply.ok()) {
    if (absl::IsNotFound(reply.status())) {
      spdlog::warn("the coordinator does not know {}; registering again", group_id_);
      group_unknown_ = true;
      return {};
    }
    if (acquire_backoff_.failures() == 0) {
      spdlog::warn("cannot reach the coordinator at {}: {}; retrying with backoff", options_.client.address,
                   std::string(reply.status().message()));
    }
    acquire_backoff_.RecordFailure();
    return {};
  }
  if (acquire_backoff_.failures() > 0) spdlog::info("the coordinator at {} answers again", options_.client.address);
  acquire_backoff_.RecordSuccess();
  if (!reply->has_job()) return {};
  PoolCommand run;
  run.kind = PoolCommand::kRunJob;
  run.job = *std::move(reply);
  return run;
}

void ServeLoop::RunJob(const v1::AcquireJobResponse& job) {
  if (!is_root()) {
    FollowerObserver observer;
    const JobOutcome outcome = runner_.Run(job, observer, nullptr);
    if (outcome.kind == JobOutcome::kFatal) {
      spdlog::error("rank {}: {} failed: {}; ending the pool", comm_.rank(), job.job().id(), outcome.message);
      out_of_step_ = true;
    }
    return;
  }
  spdlog::info("{}: acquired (attempt {}), {}", job.job().id(), job.job().attempts(),
               job.job().name().empty() ? "unnamed" : "\"" + job.job().name() + "\"");
  active_ = std::make_unique<ActiveJob>(*api_, group_id_, job, options_, hosts_.front());
  heartbeat_->SetJob(active_->control);
  AfterJob(runner_.Run(job, active_->observer, active_->control.get()));
}

void ServeLoop::AfterJob(const JobOutcome& outcome) {
  const std::string& id = active_->control->job_id();
  switch (outcome.kind) {
    case JobOutcome::kSucceeded:
      active_->buffer.SetFinal(v1::JOB_STATE_SUCCEEDED);
      spdlog::info("{} succeeded; run folder {}", id, runner_.run_folder());
      break;
    case JobOutcome::kFailed:
      active_->buffer.SetFinal(v1::JOB_STATE_FAILED, outcome.message);
      spdlog::error("{} failed: {}", id, outcome.message);
      break;
    case JobOutcome::kCancelled:
      active_->buffer.SetFinal(v1::JOB_STATE_CANCELLED);
      spdlog::info("{} cancelled ({})", id, outcome.message);
      break;
    case JobOutcome::kDropped:
      spdlog::warn("{} dropped: {}", id, outcome.message);
      FinishActiveJob();
      return;
    case JobOutcome::kInterrupted:
      // The pool is stopping: hand the job back, so the coordinator requeues it now
      // rather than when this group's lease runs out.
      active_->buffer.SetFinal(v1::JOB_STATE_QUEUED);
      spdlog::warn("{} abandoned: {}; released to the coordinator, which requeues it", id, outcome.message);
      return;  // its rows and the release are flushed when the pool stops, next round
    case JobOutcome::kFatal:
      if (outcome.report_failure) active_->buffer.SetFinal(v1::JOB_STATE_FAILED, outcome.message);
      spdlog::error("{}: {}; ending the pool", id, outcome.message);
      active_->sender.WaitDrained(options_.flush_seconds);
      out_of_step_ = true;
      return;
  }
  active_->sender.Wake();
}

void ServeLoop::FinishActiveJob() {
  if (heartbeat_) heartbeat_->SetJob(nullptr);
  const int64_t dropped = active_->buffer.dropped_stragglers();
  if (dropped > 0) spdlog::warn("{}: {} straggler event(s) were dropped while the coordinator was away", 
                                active_->control->job_id(), dropped);
  active_.reset();
  ++jobs_done_;
}

ServeEnd ServeLoop::Stop(const PoolCommand& command) {
  // A pool's exit code travels as int64 in the collective; it is always a process status.
  if (!command.signalled) return {.exit_code = static_cast<int>(command.exit_code)};
  const int signal = StopSignal() != 0 ? StopSignal() : SIGTERM;
  if (is_root()) {
    if (active_ && !active_->sender.WaitDrained(options_.flush_seconds)) {
      spdlog::warn("{}: some reports could not be delivered before stopping", active_->control->job_id());
    }
    std::fprintf(stderr, "gantry-worker serve: stopped by %s%s\n", SignalName(signal).c_str(),
                 StopSignal() != 0 ? "" : " on another rank");
  }
  return {.exit_code = ExitCodeForSignal(signal)};
}

}  // namespace gantry
