// gantry-coordinator as a child process of the load test (bench/coordinator_load.cc):
// started on a database and port, killed, and started again on the same ones.
#pragma once

#include <sys/types.h>

#include <string>

namespace gantry {

class CoordinatorProcess {
 public:
  // `bin` is the gantry-coordinator binary; each start writes its port file and log
  // (coordinator.N.log) under `work_dir`.
  CoordinatorProcess(std::string bin, std::string work_dir, double lease_seconds);
  ~CoordinatorProcess();  // kills the process (SIGKILL) if it runs
  CoordinatorProcess(const CoordinatorProcess&) = delete;
  CoordinatorProcess& operator=(const CoordinatorProcess&) = delete;

  // Starts the binary on `db` and `data_root`, listening on 127.0.0.1:`port` (0: any),
  // and waits up to 30 s for this start's port file. False (with the log's path on
  // stderr) when it exits or does not listen in time. After Kill, starts it again.
  bool Start(const std::string& db, const std::string& data_root, int port);

  // VmHWM: the peak resident set of the running process so far, in MiB (0 when unknown).
  double PeakRssMiB() const;

  // Sends `sig` and waits for the process to exit (nothing when none runs).
  void Kill(int sig);

  // The port the last start listens on.
  int port() const { return port_; }

 private:
  std::string bin_, work_dir_;
  double lease_seconds_;
  pid_t pid_ = -1;
  int port_ = 0;
  int starts_ = 0;
};

}  // namespace gantry
