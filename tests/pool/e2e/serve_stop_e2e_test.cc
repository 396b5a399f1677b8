// A pool's stop is bounded whatever the coordinator does (issue 29, item 5): gantry-worker
// serve gets SIGTERM while its coordinator is stopped (SIGSTOP: every call hangs until
// its deadline) or gone (nobody listens: every attempt fails and backs off), with long
// polls, long deadlines and long backoffs, and ends within --flush-seconds plus 5 s
// (worker/pool/serve_loop.h). Bad serve flags are refused at once, exit 2, by name.
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/pool/e2e/pool_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::ChildProcess;
using testing::CommandResult;
using testing::RunCommand;

// Long waits everywhere, so only the stop bound can end the pool in time.
const std::vector<std::string> kPatientFlags = {"--poll-seconds", "60", "--rpc-timeout", "120", "--max-backoff",
                                                "120", "--flush-seconds", "1"};
constexpr double kBoundSeconds = 1 + 5;  // --flush-seconds + kStopBoundSeconds

// A loopback port nobody listens on (bound, then closed).
int UnusedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::vector<std::string> Serve(const std::string& dir, const std::string& address) {
  std::vector<std::string> argv = {GANTRY_WORKER_BIN, "serve", "--coordinator", address, "--runs-dir", dir + "/runs"};
  argv.insert(argv.end(), kPatientFlags.begin(), kPatientFlags.end());
  return argv;
}

// Sends SIGTERM and returns the seconds until the process ended (its exit code in `code`).
double SecondsToStop(ChildProcess& pool, int* code) {
  const auto t0 = std::chrono::steady_clock::now();
  pool.Signal(SIGTERM);
  *code = pool.Wait(kBoundSeconds * 4);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(ServeStop, ASigtermEndsThePoolInTimeWhileTheCoordinatorIsStopped) {
  const std::string dir = testing::MakeTempDir("serve_stop_sigstop");
  testing::CoordinatorProcess coordinator(dir, dir + "/gantry.db", dir);
  ASSERT_TRUE(coordinator.started());
  ChildProcess pool(Serve(dir, coordinator.address()), dir + "/pool.log");
  ASSERT_TRUE(testing::WaitUntil([&] { return pool.Log().find("waiting for jobs") != std::string::npos; }, 30))
      << pool.Log();
  coordinator.process().Signal(SIGSTOP);  // its calls now hang: AcquireJob's long poll of 60 s + 120 s
  std::this_thread::sleep_for(std::chrono::seconds(2));
  int code = 0;
  const double seconds = SecondsToStop(pool, &code);
  coordinator.process().Signal(SIGCONT);
  EXPECT_LT(seconds, kBoundSeconds) << pool.Log();
  EXPECT_EQ(code, 128 + SIGTERM) << pool.Log();
  EXPECT_THAT(pool.Log(), HasSubstr("stopped by SIGTERM"));
}

TEST(ServeStop, ASigtermEndsThePoolInTimeWhileTheCoordinatorIsGone) {
  const std::string dir = testing::MakeTempDir("serve_stop_gone");
  ChildProcess pool(Serve(dir, absl::StrCat("127.0.0.1:", UnusedPort())), dir + "/pool.log");
  // Let it fail a few times, so its backoff has grown.
  ASSERT_TRUE(testing::WaitUntil([&] { return pool.Log().find("retrying with backoff") != std::string::npos; }, 30))
      << pool.Log();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int code = 0;
  const double seconds = SecondsToStop(pool, &code);
  EXPECT_LT(seconds, kBoundSeconds) << pool.Log();
  EXPECT_EQ(code, 128 + SIGTERM) << pool.Log();
}

// Refused before anything starts: every duration bounded, the CA file read and checked.
TEST(ServeStop, BadServeFlagsAreRefusedAtOnceByName) {
  const std::string dir = testing::MakeTempDir("serve_flags");
  std::ofstream(dir + "/junk.pem") << "this is not a certificate\n";
  const std::string serve = std::string(GANTRY_WORKER_BIN) + " serve --coordinator 127.0.0.1:1 ";
  const struct {
    std::string flags;
    const char* says;
  } cases[] = {
      {"--flush-seconds inf", "--flush-seconds: bad value 'inf' (a number in [0, 600])"},
      {"--flush-seconds nan", "--flush-seconds: bad value 'nan'"},
      {"--poll-seconds 1e-9", "--poll-seconds: bad value '1e-9' (a number in [0.1, 300])"},
      {"--poll-seconds inf", "--poll-seconds: bad value 'inf'"},
      {"--plan-wait-seconds 1e400", "--plan-wait-seconds: bad value '1e400'"},
      {"--rpc-timeout 0", "--rpc-timeout: bad value '0'"},
      {"--report-seconds -1", "--report-seconds: bad value '-1'"},
      {"--max-backoff 1e9", "--max-backoff: bad value '1e9'"},
      {"--max-jobs 2147483648", "--max-jobs: bad value '2147483648' (an integer in [0, 1000000000])"},
      {"--max-jobs abc", "--max-jobs: bad value 'abc'"},
      {"--tls-ca " + dir + "/junk.pem", "--tls-ca"},
  };
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const CommandResult r = RunCommand(serve + c.flags, 30);
    EXPECT_EQ(r.exit_code, 2) << c.flags << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.says)) << c.flags;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10) << c.flags;
  }
}

}  // namespace
}  // namespace gantry
