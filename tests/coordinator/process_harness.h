// Real processes for the end-to-end tests: the gantry-coordinator binary on an
// ephemeral loopback port, `gantry` commands, and a fake worker group speaking gRPC.
// Every wait is bounded.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "gantry/v1/coordinator.grpc.pb.h"

namespace gantry::testing {

// A test's folders: dir/ holds the database and logs; dir/data is the data root, with
// an (empty) dataset folder dir/data/mnist in it.
struct Folders {
  std::string dir, root, data;
};
Folders MakeFolders(const std::string& name);

struct CommandResult {
  int exit_code = -1;  // -1: killed or did not exit
  std::string output;  // stdout (stderr too when asked)
};

// Runs `command` through /bin/sh under `timeout`, capturing stdout (and stderr when
// `with_stderr`).
CommandResult RunCommand(const std::string& command, double timeout_seconds = 60, bool with_stderr = true);

// A `gantry` command line with the binary and coordinator address filled in.
std::string Gantry(int port, const std::string& args);

// How much slower than a plain build the programs under test run: GANTRY_TEST_SLOWDOWN
// (scripts/sanitizers.sh sets it for TSan, whose programs run several times slower), 1
// when unset or not a number >= 1. Tests whose outcome depends on a lease or a deadline
// not running out multiply those durations by it.
double Slowdown();

// A child process with its output in a file.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();
  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // Waits up to `timeout_seconds`; the exit code, or -1 (killed by a signal, or still
  // running, in which case it is killed).
  int Wait(double timeout_seconds);
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// gantry-coordinator on 127.0.0.1, on a free port (or `port`), over `db`.
class CoordinatorProcess {
 public:
  CoordinatorProcess(const std::string& dir, const std::string& db, const std::string& data_root,
                     const std::vector<std::string>& extra_flags = {}, int port = 0);
  int port() const { return port_; }
  bool started() const { return port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  ChildProcess& process() { return *process_; }

 private:
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

// rank 0 of a worker group as the coordinator sees it: registers, long-polls, reports.
class FakeWorkerGroup {
 public:
  FakeWorkerGroup(const std::string& address, int world_size, const std::string& token = "");
  grpc::Status Register();
  // Polls until a job comes or `timeout_seconds` pass; false when none came.
  bool AcquireJob(double timeout_seconds);
  grpc::Status Heartbeat(v1::HeartbeatResponse* reply = nullptr);
  grpc::Status Report(const v1::ReportProgressRequest& partial, v1::ReportProgressResponse* reply);
  grpc::Status ReportEpoch(const v1::EpochMetrics& row, v1::ReportProgressResponse* reply);
  grpc::Status Finish(v1::JobState state, const std::string& error = "");

  const std::string& group_id() const { return group_id_; }
  const v1::AcquireJobResponse& acquired() const { return acquired_; }
  void Reconnect(const std::string& address);

 private:
  std::unique_ptr<grpc::ClientContext> Context() const;

  int world_size_;
  std::string token_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
  std::string group_id_;
  v1::AcquireJobResponse acquired_;
};

}  // namespace gantry::testing
