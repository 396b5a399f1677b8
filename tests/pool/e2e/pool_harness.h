// The worker pool under a real mpirun for the end-to-end tests: `mpirun -np 2
// gantry-worker serve` against a gantry-coordinator on loopback, driven with the gantry
// CLI (tests/coordinator/process_harness.h). Every wait is bounded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/coordinator/process_harness.h"

namespace gantry::testing {

// Where the training images come from: Debian's Fashion-MNIST, under this data root.
inline constexpr char kDataRoot[] = "/usr/share/datasets";
inline constexpr char kFashionMnist[] = "/usr/share/datasets/fashion-mnist";

// Why the end-to-end tests cannot run here (no mpirun, no dataset), or "".
std::string MissingPrerequisite();

// `mpirun -np 2 gantry-worker serve --coordinator ADDRESS --runs-dir DIR/runs FLAGS...`,
// its output in DIR/<log_name>.
class PoolProcess {
 public:
  PoolProcess(const std::string& dir, const std::string& address, const std::vector<std::string>& flags,
              const std::string& log_name = "pool.log");
  ChildProcess& process() { return process_; }
  // The pid of the gantry-worker process of `rank`, or -1 when it cannot be found
  // within 10 s.
  int RankPid(int rank);
  std::string runs_dir() const { return runs_dir_; }

 private:
  std::string runs_dir_;
  ChildProcess process_;
};

// Calls `done` every 50 ms until it is true or `timeout_seconds` passed.
bool WaitUntil(const std::function<bool()>& done, double timeout_seconds);

// `gantry --json status ID` (an empty object when the call fails).
nlohmann::json JobStatus(int port, const std::string& id);

// The contents of a file ("" when missing).
std::string ReadFile(const std::string& path);

}  // namespace gantry::testing
