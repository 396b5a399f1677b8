#include "tests/pool/e2e/pool_harness.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace gantry::testing {
namespace {

std::vector<std::string> PoolArgv(const std::string& address, const std::string& runs_dir,
                                  const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {GANTRY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                                   GANTRY_WORKER_BIN, "serve", "--coordinator", address, "--runs-dir", runs_dir};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

// The value of `name` in /proc/PID/environ, or "".
std::string EnvironOf(int pid, const std::string& name) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string entry; std::getline(f, entry, '\0');) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return "";
}

// The pids whose parent is `parent`.
std::vector<int> ChildrenOf(int parent) {
  std::vector<int> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: the comm may hold spaces, so read after the last ')'.
    const std::vector<std::string> fields = absl::StrSplit(line.substr(line.rfind(')') + 2), ' ');
    int ppid = 0;
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &ppid) && ppid == parent) children.push_back(pid);
  }
  return children;
}

}  // namespace

std::string MissingPrerequisite() {
  if (access(GANTRY_MPIEXEC, X_OK) != 0) return std::string("no mpirun at '") + GANTRY_MPIEXEC + "'";
  if (!std::filesystem::exists(std::string(kFashionMnist) + "/train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(std::string(kFashionMnist) + "/train-images-idx3-ubyte")) {
    return std::string("no Fashion-MNIST in ") + kFashionMnist + " (Debian's dataset-fashion-mnist)";
  }
  return "";
}

PoolProcess::PoolProcess(const std::string& dir, const std::string& address, const std::vector<std::string>& flags,
                         const std::string& log_name)
    : runs_dir_(dir + "/runs"), process_(PoolArgv(address, runs_dir_, flags), dir + "/" + log_name) {}

int PoolProcess::RankPid(int rank) {
  int found = -1;
  WaitUntil(
      [&] {
        for (int pid : ChildrenOf(process_.pid())) {
          if (EnvironOf(pid, "OMPI_COMM_WORLD_RANK") == std::to_string(rank)) found = pid;
        }
        return found > 0;
      },
      10);
  return found;
}

bool WaitUntil(const std::function<bool()>& done, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

nlohmann::json JobStatus(int port, const std::string& id) {
  const CommandResult r = RunCommand(Gantry(port, "--json status " + id), 30, /*with_stderr=*/false);
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace gantry::testing
