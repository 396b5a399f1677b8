#include "tests/coordinator/process_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <grpcpp/grpcpp.h>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Folders MakeFolders(const std::string& name) {
  Folders s;
  s.dir = MakeTempDir(name);
  s.root = s.dir + "/data";
  s.data = s.root + "/mnist";
  std::filesystem::create_directories(s.data);
  return s;
}

CommandResult RunCommand(const std::string& command, double timeout_seconds, bool with_stderr) {
  const std::string full = absl::StrCat("timeout -s KILL ", timeout_seconds, " ", command, with_stderr ? " 2>&1" : "");
  FILE* pipe = popen(full.c_str(), "r");
  CommandResult result;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string Gantry(int port, const std::string& args) {
  return absl::StrCat(GANTRY_CLI_BIN, " --coordinator 127.0.0.1:", port, " --timeout 20 ", args);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) : log_path_(log_path) {
  // Everything the child needs is prepared before fork: this process has threads, so the
  // child may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fd);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int ChildProcess::Wait(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (pid_ > 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "process " << pid_ << " still running after " << timeout_seconds << " s; killing it";
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::string ChildProcess::Log() const { return ReadAll(log_path_); }

CoordinatorProcess::CoordinatorProcess(const std::string& dir, const std::string& db, const std::string& data_root,
                                       const std::vector<std::string>& extra_flags, int port) {
  const std::string port_file = dir + "/port";
  unlink(port_file.c_str());
  std::vector<std::string> argv = {GANTRY_COORDINATOR_BIN, "--listen", absl::StrCat("127.0.0.1:", port), "--db", db,
                                   "--data-root", data_root, "--port-file", port_file};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  process_ = std::make_unique<ChildProcess>(argv, dir + "/coordinator.log");
  for (int i = 0; i < 500 && port_ == 0; ++i) {  // up to 10 s
    std::ifstream f(port_file);
    if (!(f >> port_)) port_ = 0;
    if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (port_ == 0) ADD_FAILURE() << "gantry-coordinator did not start:\n" << process_->Log();
}

FakeWorkerGroup::FakeWorkerGroup(const std::string& address, int world_size, const std::string& token)
    : world_size_(world_size), token_(token) {
  Reconnect(address);
}

void FakeWorkerGroup::Reconnect(const std::string& address) {
  stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

std::unique_ptr<grpc::ClientContext> FakeWorkerGroup::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  if (!token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
  return context;
}

grpc::Status FakeWorkerGroup::Register() {
  v1::RegisterGroupRequest request;
  request.set_world_size(world_size_);
  request.set_name("fake group");
  for (int r = 0; r < world_size_; ++r) {
    request.add_hosts("127.0.0.1");
    request.add_devices("cpu");
  }
  v1::RegisterGroupResponse reply;
  grpc::Status status = stub_->RegisterGroup(Context().get(), request, &reply);
  group_id_ = reply.group_id();
  return status;
}

bool FakeWorkerGroup::AcquireJob(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    v1::AcquireJobRequest request;
    request.set_group_id(group_id_);
    request.set_wait_seconds(1);
    grpc::Status status = stub_->AcquireJob(Context().get(), request, &acquired_);
    if (status.ok() && acquired_.has_job()) return true;
  }
  return false;
}

grpc::Status FakeWorkerGroup::Heartbeat(v1::HeartbeatResponse* reply) {
  v1::HeartbeatRequest request;
  request.set_group_id(group_id_);
  v1::HeartbeatResponse ignored;
  return stub_->Heartbeat(Context().get(), request, reply != nullptr ? reply : &ignored);
}

grpc::Status FakeWorkerGroup::Report(const v1::ReportProgressRequest& partial, v1::ReportProgressResponse* reply) {
  v1::ReportProgressRequest request = partial;
  request.set_group_id(group_id_);
  request.set_job_id(acquired_.job().id());
  request.set_attempt(acquired_.job().attempts());
  v1::ReportProgressResponse ignored;
  return stub_->ReportProgress(Context().get(), request, reply != nullptr ? reply : &ignored);
}

grpc::Status FakeWorkerGroup::ReportEpoch(const v1::EpochMetrics& row, v1::ReportProgressResponse* reply) {
  v1::ReportProgressRequest request;
  *request.add_epochs() = row;
  v1::Progress* p = request.mutable_progress();
  p->set_batch_size(row.batch_size());
  p->set_epoch(row.epoch());
  p->set_step(row.steps());
  p->set_steps_per_epoch(row.steps());
  p->set_samples_per_s(row.samples_per_s());
  return Report(request, reply);
}

grpc::Status FakeWorkerGroup::Finish(v1::JobState state, const std::string& error) {
  v1::ReportProgressRequest request;
  request.set_final_state(state);
  request.set_error(error);
  return Report(request, nullptr);
}

double Slowdown() {
  const char* text = std::getenv("GANTRY_TEST_SLOWDOWN");
  if (text == nullptr) return 1.0;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value >= 1.0 ? value : 1.0;
}

}  // namespace gantry::testing
