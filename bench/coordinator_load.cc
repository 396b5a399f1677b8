// gantry-bench-coordinator: a bounded load test of gantry-coordinator on loopback.
//
// It starts the coordinator binary on a fresh database, then plays a busy site against
// it: --groups simulated worker groups long-poll AcquireJob and, for each job, send
// progress reports at --report-hz and a final SUCCEEDED report with an epoch row;
// --watchers clients follow running jobs with WatchJob; --jobs jobs are submitted at
// the start by four clients. With --kill-restart, once every job is submitted and half have finished,
// the coordinator is killed with SIGKILL and started again on the same database and
// port; clients retry UNAVAILABLE calls, as the real pool does.
//
// It prints p50/p99/max latency per RPC, jobs/s, the coordinator's peak RSS, and checks
// that no job was lost or run twice: every submitted job ends SUCCEEDED, exactly once,
// after exactly one hand-out, and the store holds no job that was not submitted. Exit
// 0 when every check holds, 1 when one fails, 2 for bad flags or a coordinator that
// does not start. Everything is bounded by --timeout-seconds.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "bench/coordinator_process.h"
#include "bench/load_records.h"
#include "channel/client_channel.h"
#include "gantry/v1/coordinator.grpc.pb.h"

namespace gantry {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct LoadOptions {
  std::string coordinator_bin;
  std::string work_dir;
  int groups = 50;
  int jobs = 2000;
  int watchers = 20;
  double report_hz = 10;
  int reports_per_job = 5;
  bool kill_restart = true;
  double lease_seconds = 30;
  double timeout_seconds = 600;
};

// --- the clients ------------------------------------------------------------------

class Load {
 public:
  Load(LoadOptions options, std::string data_dir) : o_(std::move(options)), data_dir_(std::move(data_dir)) {
    deadline_ = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o_.timeout_seconds * 1000));
  }

  void Connect(int port) {
    grpc::ChannelArguments args;
    SetClientKeepalive(args);
    // Reconnect quickly after the restart (gRPC's default backoff starts at 1 s).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one connection per stub
    for (int i = 0; i < o_.groups + o_.watchers + kSubmitters; ++i) {
      stubs_.push_back(v1::Coordinator::NewStub(
          grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args)));
    }
  }

  bool TimedOut() const { return Clock::now() > deadline_; }
  bool done() const { return done_.load(); }
  void Finish() { done_ = true; }
  Ledger& ledger() { return ledger_; }
  Latencies& latencies() { return latencies_; }
  int unavailable() const { return unavailable_.load(); }
  std::atomic<bool>& submitted_all() { return submitted_all_; }
  std::set<std::string> submitted() {
    absl::MutexLock lock(&mu_);
    return submitted_;
  }

  // Calls `rpc` until it answers other than UNAVAILABLE (the coordinator is down or
  // restarting) or the run's deadline passes; records the answering call's latency.
  // `retried` tells whether an earlier try may have reached the coordinator; `ms` gets
  // the answering call's latency (recorded under `name` unless that is empty).
  template <typename Call>
  grpc::Status Retry(const std::string& name, Call call, bool* retried = nullptr, double* ms = nullptr) {
    if (retried) *retried = false;
    while (true) {
      const auto start = Clock::now();
      grpc::Status status = call();
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE || TimedOut()) {
        const double elapsed = SecondsSince(start) * 1e3;
        if (ms) *ms = elapsed;
        if (status.ok() && !name.empty()) latencies_.Add(name, elapsed);
        return status;
      }
      if (retried) *retried = true;
      ++unavailable_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Submitter `index` of kSubmitters submits every kSubmitters-th job, so one client's
  // round trips do not cap the rate at which the queue fills.
  void Submit(int index) {
    v1::Coordinator::Stub& stub = *stubs_[o_.groups + o_.watchers + index];
    for (int i = index; i < o_.jobs && !TimedOut(); i += kSubmitters) {
      v1::SubmitJobRequest request;
      v1::RunSpec* spec = request.mutable_spec();
      spec->set_dataset("mnist");
      spec->set_data_dir(data_dir_);
      spec->add_batch_sizes(8);
      spec->mutable_epochs()->set_value(1);
      request.set_world_size(1);
      request.set_name(absl::StrCat("load-", i));
      v1::Job job;
      const grpc::Status s = Retry("SubmitJob", [&] {
        auto context = CallContext(10, "");
        return stub.SubmitJob(context.get(), request, &job);
      });
      if (!s.ok()) {
        ledger_.Anomaly(absl::StrCat("SubmitJob: ", s.error_message()));
        continue;
      }
      absl::MutexLock lock(&mu_);
      submitted_.insert(job.id());
    }
    if (++submitters_done_ == kSubmitters) submitted_all_ = true;
  }

  static constexpr int kSubmitters = 4;

  // One simulated group: register, then long-poll and run jobs until the load is done.
  void Group(int index) {
    v1::Coordinator::Stub& stub = *stubs_[index];
    v1::RegisterGroupRequest reg;
    reg.set_world_size(1);
    reg.set_name(absl::StrCat("load-group-", index));
    reg.add_hosts("localhost");
    reg.add_devices("cpu");
    v1::RegisterGroupResponse registered;
    if (!Retry("RegisterGroup", [&] {
           auto context = CallContext(10, "");
           return stub.RegisterGroup(context.get(), reg, &registered);
         }).ok()) {
      ledger_.Anomaly(absl::StrCat("group ", index, " could not register"));
      return;
    }
    const std::string group = registered.group_id();
    auto last_beat = Clock::now();
    while (!done() && !TimedOut()) {
      if (SecondsSince(last_beat) > o_.lease_seconds / 3) {
        Heartbeat(stub, group);
        last_beat = Clock::now();
      }
      v1::AcquireJobRequest request;
      request.set_group_id(group);
      request.set_wait_seconds(2);
      v1::AcquireJobResponse acquired;
      double ms = 0;
      // Only calls that got a job are timed: an empty one waited out its long poll.
      const grpc::Status s = Retry(
          "",
          [&] {
            auto context = CallContext(15, "");
            return stub.AcquireJob(context.get(), request, &acquired);
          },
          nullptr, &ms);
      if (!s.ok()) {
        ledger_.Anomaly(absl::StrCat(group, " AcquireJob: ", s.error_message()));
        continue;
      }
      if (!acquired.has_job()) continue;
      latencies_.Add("AcquireJob (with a job)", ms);
      ledger_.Acquired(acquired.job().id(), group, acquired.job().attempts());
      RunJob(stub, group, acquired.job());
      last_beat = Clock::now();
    }
  }

  // Follows recently started jobs with WatchJob, each for a short while.
  void Watcher(int index) {
    v1::Coordinator::Stub& stub = *stubs_[o_.groups + index];
    std::mt19937 rng(index);
    while (!done() && !TimedOut()) {
      const std::string job = ledger_.RecentJob(rng);
      if (job.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      v1::WatchJobRequest request;
      request.set_job_id(job);
      auto context = CallContext(1.0, "");
      const auto start = Clock::now();
      std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = stub.WatchJob(context.get(), request);
      v1::JobEvent event;
      bool first = true;
      while (reader->Read(&event)) {
        if (first) latencies_.Add("WatchJob (first event)", SecondsSince(start) * 1e3);
        first = false;
      }
      const grpc::Status s = reader->Finish();
      if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
        ++unavailable_;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

 private:
  void Heartbeat(v1::Coordinator::Stub& stub, const std::string& group) {
    v1::HeartbeatRequest request;
    request.set_group_id(group);
    v1::HeartbeatResponse reply;
    const grpc::Status s = Retry("Heartbeat", [&] {
      auto context = CallContext(10, "");
      return stub.Heartbeat(context.get(), request, &reply);
    });
    if (!s.ok()) ledger_.Anomaly(absl::StrCat(group, " Heartbeat: ", s.error_message()));
  }

  void RunJob(v1::Coordinator::Stub& stub, const std::string& group, const v1::Job& job) {
    const auto period = std::chrono::microseconds(static_cast<int64_t>(1e6 / o_.report_hz));
    v1::ReportProgressRequest report;
    report.set_group_id(group);
    report.set_job_id(job.id());
    report.set_attempt(job.attempts());
    auto next = Clock::now();
    for (int step = 1; step <= o_.reports_per_job; ++step) {
      next += period;
      std::this_thread::sleep_until(next);
      v1::Progress* progress = report.mutable_progress();
      progress->set_batch_size(8);
      progress->set_epoch(1);
      progress->set_step(step);
      progress->set_steps_per_epoch(o_.reports_per_job);
      progress->set_global_step(step);
      v1::ReportProgressResponse reply;
      const grpc::Status s = Retry("ReportProgress", [&] {
        auto context = CallContext(10, "");
        return stub.ReportProgress(context.get(), report, &reply);
      });
      if (!s.ok()) {
        ledger_.Anomaly(absl::StrCat(job.id(), " progress: ", s.error_message()));
        return;
      }
    }
    v1::EpochMetrics* row = report.add_epochs();
    row->set_batch_size(8);
    row->set_epoch(1);
    row->set_steps(o_.reports_per_job);
    row->set_seconds(o_.reports_per_job / o_.report_hz);
    row->set_world_size(1);
    report.set_final_state(v1::JOB_STATE_SUCCEEDED);
    v1::ReportProgressResponse reply;
    bool retried = false;
    const grpc::Status s = Retry(
        "ReportProgress (final)",
        [&] {
          auto context = CallContext(10, "");
          return stub.ReportProgress(context.get(), report, &reply);
        },
        &retried);
    if (s.ok()) {
      ledger_.Succeeded(job.id());
    } else if (retried && s.error_code() == grpc::StatusCode::ABORTED && Succeeded(stub, job.id())) {
      ledger_.Succeeded(job.id());  // the first try was stored; its reply was lost in the restart
    } else {
      ledger_.Anomaly(absl::StrCat(job.id(), " final report: ", s.error_message()));
    }
  }

  bool Succeeded(v1::Coordinator::Stub& stub, const std::string& id) {
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    const grpc::Status s = Retry("GetJob", [&] {
      auto context = CallContext(10, "");
      return stub.GetJob(context.get(), request, &job);
    });
    return s.ok() && job.state() == v1::JOB_STATE_SUCCEEDED;
  }

  const LoadOptions o_;
  const std::string data_dir_;
  Clock::time_point deadline_;
  std::vector<std::unique_ptr<v1::Coordinator::Stub>> stubs_;
  Ledger ledger_;
  Latencies latencies_;
  std::atomic<bool> done_{false};
  std::atomic<bool> submitted_all_{false};
  std::atomic<int> submitters_done_{0};
  std::atomic<int> unavailable_{0};
  absl::Mutex mu_;
  std::set<std::string> submitted_;
};

// The store's view at the end: every job SUCCEEDED after one attempt, none unknown.
std::vector<std::string> CheckStore(v1::Coordinator::Stub& stub, const std::set<std::string>& submitted) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  v1::ListJobsRequest request;
  request.set_page_size(1000);
  while (true) {
    v1::ListJobsResponse page;
    auto context = CallContext(30, "");
    const grpc::Status s = stub.ListJobs(context.get(), request, &page);
    if (!s.ok()) return {absl::StrCat("ListJobs: ", s.error_message())};
    for (const v1::Job& job : page.jobs()) {
      seen.insert(job.id());
      if (!submitted.count(job.id())) problems.push_back(absl::StrCat(job.id(), " is in the store but was not submitted"));
      if (job.state() != v1::JOB_STATE_SUCCEEDED) {
        problems.push_back(absl::StrCat(job.id(), " ended in state ", v1::JobState_Name(job.state())));
      }
      if (job.attempts() != 1) problems.push_back(absl::StrCat(job.id(), " took ", job.attempts(), " attempts"));
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  for (const std::string& id : submitted) {
    if (!seen.count(id)) problems.push_back(absl::StrCat(id, " was submitted but is not in the store (lost)"));
  }
  return problems;
}

// A fresh temporary work folder when none is given; false when none can be made.
bool PrepareWorkDir(LoadOptions& o) {
  if (!o.work_dir.empty()) return true;
  std::string templ = (std::filesystem::temp_directory_path() / "gantry-load-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return false;
  o.work_dir = templ;
  return true;
}

// Where the coordinator keeps its state; the database starts empty.
struct Site {
  std::string data_root, db;
};

Site PrepareSite(const std::string& work_dir) {
  Site site{work_dir + "/data", work_dir + "/gantry.db"};
  std::filesystem::create_directories(site.data_root + "/mnist");
  std::filesystem::remove(site.db);
  return site;
}

// What happened to the coordinator while the clients ran.
struct RunRecord {
  double seconds = 0;              // from the first call to the last job's end (or the time-out)
  double peak_before_kill = 0;     // MiB
  double downtime = 0;             // seconds from the SIGKILL until it served again
  double peak_end = 0;             // MiB, of the (restarted) coordinator at the end
  bool killed = false, restart_failed = false;
};

// Waits until every submitted job has finished (or the time-out); with --kill-restart,
// once all are submitted and half have finished, kills the coordinator with SIGKILL and
// starts it again on the same database and `port`. `start`: when the clients started.
RunRecord RunUntilDone(const LoadOptions& o, Load& load, CoordinatorProcess& coordinator, const Site& site, int port,
                       Clock::time_point start) {
  RunRecord record;
  while (!load.TimedOut()) {
    const int finished = load.ledger().finished();
    if (load.submitted_all() && finished >= static_cast<int>(load.submitted().size())) break;
    if (o.kill_restart && !record.killed && load.submitted_all() && finished >= o.jobs / 2) {
      record.peak_before_kill = coordinator.PeakRssMiB();
      const auto down = Clock::now();
      coordinator.Kill(SIGKILL);
      record.killed = true;
      if (!coordinator.Start(site.db, site.data_root, port)) {
        record.restart_failed = true;
        break;
      }
      record.downtime = SecondsSince(down);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  record.seconds = SecondsSince(start);
  record.peak_end = coordinator.PeakRssMiB();
  return record;
}

// Every way the run fell short: the clients' ledger, the time-out, the restart, the
// number submitted, and the store's view at the end.
std::vector<std::string> Problems(const LoadOptions& o, Load& load, const RunRecord& record, int port) {
  std::vector<std::string> problems = load.ledger().Check(load.submitted());
  if (load.TimedOut()) problems.push_back(absl::StrCat("did not finish within --timeout-seconds ", o.timeout_seconds));
  if (record.restart_failed) problems.push_back("the coordinator did not start again after SIGKILL");
  if (static_cast<int>(load.submitted().size()) != o.jobs) {
    problems.push_back(absl::StrCat(load.submitted().size(), " of ", o.jobs, " jobs were submitted"));
  }
  if (!record.restart_failed) {
    grpc::ChannelArguments args;
    auto stub = v1::Coordinator::NewStub(grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                                                   grpc::InsecureChannelCredentials(), args));
    for (std::string& p : CheckStore(*stub, load.submitted())) problems.push_back(std::move(p));
  }
  return problems;
}

void PrintReport(const LoadOptions& o, Load& load, const RunRecord& record, const std::vector<std::string>& problems) {
  std::printf("gantry-bench-coordinator: %d groups, %zu jobs, %d watchers, progress at %.0f Hz per group, "
              "%d reports per job%s\n\n",
              o.groups, load.submitted().size(), o.watchers, o.report_hz, o.reports_per_job,
              record.killed ? ", SIGKILL + restart of the coordinator at half way" : "");
  load.latencies().Print();
  std::printf("\n| figure | value |\n|---|---:|\n");
  std::printf("| wall time | %.1f s |\n", record.seconds);
  std::printf("| jobs/s (submit to last success) | %.1f |\n", load.ledger().finished() / record.seconds);
  if (record.killed) {
    std::printf("| peak RSS before the kill | %.1f MiB |\n", record.peak_before_kill);
    std::printf("| restart (kill to serving) | %.2f s |\n", record.downtime);
    std::printf("| peak RSS of the restarted coordinator | %.1f MiB |\n", record.peak_end);
  } else {
    std::printf("| peak RSS | %.1f MiB |\n", record.peak_end);
  }
  std::printf("| calls retried after UNAVAILABLE | %d |\n", load.unavailable());
  std::printf("| jobs lost or run twice | %zu problems |\n\n", problems.size());
  for (size_t i = 0; i < problems.size() && i < 20; ++i) std::printf("PROBLEM: %s\n", problems[i].c_str());
}

int Run(LoadOptions o) {
  if (!PrepareWorkDir(o)) return 2;
  const Site site = PrepareSite(o.work_dir);
  CoordinatorProcess coordinator(o.coordinator_bin, o.work_dir, o.lease_seconds);
  if (!coordinator.Start(site.db, site.data_root, 0)) return 2;
  const int port = coordinator.port();
  Load load(o, site.data_root + "/mnist");
  load.Connect(port);

  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int s = 0; s < Load::kSubmitters; ++s) threads.emplace_back([&, s] { load.Submit(s); });
  for (int g = 0; g < o.groups; ++g) threads.emplace_back([&, g] { load.Group(g); });
  for (int w = 0; w < o.watchers; ++w) threads.emplace_back([&, w] { load.Watcher(w); });
  const RunRecord record = RunUntilDone(o, load, coordinator, site, port, start);
  load.Finish();
  for (std::thread& t : threads) t.join();

  const std::vector<std::string> problems = Problems(o, load, record, port);
  coordinator.Kill(SIGTERM);
  PrintReport(o, load, record, problems);
  if (!problems.empty()) return 1;
  std::printf("OK: every job ran once and succeeded; none lost, none extra\n");
  std::filesystem::remove_all(o.work_dir);
  return 0;
}

}  // namespace
}  // namespace gantry

int main(int argc, char** argv) {
  gantry::LoadOptions o;
  CLI::App app{"gantry-bench-coordinator: a bounded loopback load test of gantry-coordinator"};
  app.add_option("--coordinator", o.coordinator_bin, "the gantry-coordinator binary")->required();
  app.add_option("--work-dir", o.work_dir, "folder for the database and logs (default: a new temporary one)");
  app.add_option("--groups", o.groups, "simulated worker groups")->default_val(o.groups)->check(CLI::Range(1, 1000));
  app.add_option("--jobs", o.jobs, "jobs submitted")->default_val(o.jobs)->check(CLI::Range(1, 100000));
  app.add_option("--watchers", o.watchers, "WatchJob clients")->default_val(o.watchers)->check(CLI::Range(0, 1000));
  app.add_option("--report-hz", o.report_hz, "progress reports per second per group")
      ->default_val(o.report_hz)
      ->check(CLI::Range(0.1, 1000.0));
  app.add_option("--reports-per-job", o.reports_per_job, "progress reports before a job's final report")
      ->default_val(o.reports_per_job)
      ->check(CLI::Range(0, 10000));
  app.add_option("--kill-restart", o.kill_restart, "SIGKILL and restart the coordinator at half way (true/false)")
      ->default_val(o.kill_restart);
  app.add_option("--lease-seconds", o.lease_seconds, "the coordinator's --lease-seconds")
      ->default_val(o.lease_seconds)
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--timeout-seconds", o.timeout_seconds, "bound on the whole run")
      ->default_val(o.timeout_seconds)
      ->check(CLI::Range(1.0, 86400.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  signal(SIGPIPE, SIG_IGN);
  return gantry::Run(o);
}
