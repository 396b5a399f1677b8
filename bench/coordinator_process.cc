#include "bench/coordinator_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gantry {

CoordinatorProcess::CoordinatorProcess(std::string bin, std::string work_dir, double lease_seconds)
    : bin_(std::move(bin)), work_dir_(std::move(work_dir)), lease_seconds_(lease_seconds) {}

CoordinatorProcess::~CoordinatorProcess() { Kill(SIGKILL); }

bool CoordinatorProcess::Start(const std::string& db, const std::string& data_root, int port) {
  ++starts_;
  const std::string port_file = absl::StrCat(work_dir_, "/port.", starts_);
  const std::string log = absl::StrCat(work_dir_, "/coordinator.", starts_, ".log");
  std::vector<std::string> args = {bin_, "--listen", absl::StrCat("127.0.0.1:", port), "--db", db, "--data-root",
                                   data_root, "--port-file", port_file, "--lease-seconds", absl::StrCat(lease_seconds_)};
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  for (int i = 0; i < 300; ++i) {  // up to 30 s
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "gantry-bench-coordinator: %s did not start; see %s\n", bin_.c_str(), log.c_str());
  return false;
}

double CoordinatorProcess::PeakRssMiB() const {
  std::ifstream status(absl::StrCat("/proc/", pid_, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

void CoordinatorProcess::Kill(int sig) {
  if (pid_ <= 0) return;
  kill(pid_, sig);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace gantry
