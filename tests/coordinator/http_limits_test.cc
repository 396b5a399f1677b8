// The HTTP listener under clients that hold connections without finishing requests:
// slowloris clients (a header line every 1.5 s, never the end of the head), idle
// connections that never send a byte, and idle keep-alive connections after a request.
// Whatever they hold, the dashboard and /metrics answer within a second, the slow ones
// are closed within the read time-out, and no more than the cap stay open.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "coordinator/app/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using Steady = std::chrono::steady_clock;

// A loopback connection to `port` (-1 when it cannot be made), with 5 s socket timeouts.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& text) {
  return send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

// True when the server closed `fd` (EOF or a reset, perhaps after a response, which
// goes to `received`) within `seconds`.
bool ClosedByServer(int fd, double seconds, std::string* received = nullptr) {
  const Steady::time_point deadline = Steady::now() + std::chrono::duration_cast<Steady::duration>(
                                                        std::chrono::duration<double>(seconds));
  char buffer[512];
  while (Steady::now() < deadline) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;  // reset
    if (n > 0 && received != nullptr) received->append(buffer, static_cast<size_t>(n));
  }
  return false;
}

class HttpLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = testing::MakeTempDir("http_limits");
    std::filesystem::create_directories(dir + "/data");
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.db_path = dir + "/gantry.db";
    options.data_roots = {dir + "/data"};
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    port_ = server_->http_port();
  }

  void TearDown() override {
    stop_ = true;
    for (std::thread& t : trickles_) t.join();
    for (int fd : held_) close(fd);
  }

  // The seconds a GET of `path` on a new connection takes; its status in `status`.
  double TimeGet(const std::string& path, int& status) {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(5);
    client.set_read_timeout(5);
    const Steady::time_point start = Steady::now();
    httplib::Result r = client.Get(path.c_str());
    status = r ? r->status : -1;
    return std::chrono::duration<double>(Steady::now() - start).count();
  }

  void ExpectAnswersWithinASecond(const std::string& load) {
    const double limit = 1.0 * testing::Slowdown();
    for (const char* path : {"/", "/metrics", "/api/jobs"}) {
      int status = 0;
      const double seconds = TimeGet(path, status);
      EXPECT_EQ(status, 200) << path << " beside " << load;
      EXPECT_LT(seconds, limit) << path << " beside " << load;
    }
  }

  // A slowloris client: a request line, then one header line every 1.5 s, never the end.
  int Slowloris() {
    const int fd = Connect(port_);
    EXPECT_GE(fd, 0);
    SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n");
    trickles_.emplace_back([this, fd] {
      for (int i = 0; !stop_; ++i) {
        for (int t = 0; t < 15 && !stop_; ++t) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!stop_ && !SendAll(fd, absl::StrCat("X-Slow-", i, ": y\r\n"))) return;
      }
    });
    held_.push_back(fd);
    return fd;
  }

  std::unique_ptr<CoordinatorServer> server_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> trickles_;
  std::vector<int> held_;
};

TEST_F(HttpLimitsTest, AnswersWithinASecondBesideFourSlowlorisClients) {
  std::vector<int> slow;
  for (int i = 0; i < 4; ++i) slow.push_back(Slowloris());
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // each has sent a header line since
  ExpectAnswersWithinASecond("4 slowloris clients");
  // Each is closed once its head is older than the read time-out (5 s), 408 first.
  for (int fd : slow) EXPECT_TRUE(ClosedByServer(fd, 6 * testing::Slowdown()));
}

TEST_F(HttpLimitsTest, AnswersWithinASecondBeside200IdleConnections) {
  // 100 that never send a byte, and 100 idle keep-alive ones after a request.
  for (int i = 0; i < 100; ++i) held_.push_back(Connect(port_));
  for (int i = 0; i < 100; ++i) {
    const int fd = Connect(port_);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    char buffer[256];
    ASSERT_GT(recv(fd, buffer, sizeof(buffer), 0), 0) << "request " << i << " of the keep-alive ones";
    held_.push_back(fd);
  }
  ExpectAnswersWithinASecond("200 idle connections");
  EXPECT_LE(server_->http_open_connections(), ConnectionLimits{}.max_connections);
}

TEST_F(HttpLimitsTest, BoundsHeadsAndIdleConnections) {
  // A head larger than the cap: closed at once (with a 431, when the client reads it
  // before the reset of what it still sent).
  const int big = Connect(port_);
  ASSERT_GE(big, 0);
  std::string head = "GET / HTTP/1.1\r\n";
  while (head.size() <= ConnectionLimits::kMaxHeadBytes) head += "X-Padding: " + std::string(1000, 'p') + "\r\n";
  SendAll(big, head);
  std::string answer;
  EXPECT_TRUE(ClosedByServer(big, 2, &answer));
  if (!answer.empty()) {
    EXPECT_THAT(answer, HasSubstr("431"));
  }
  close(big);
  // An idle connection is closed after the idle time-out (5 s).
  const int idle = Connect(port_);
  ASSERT_GE(idle, 0);
  EXPECT_TRUE(ClosedByServer(idle, 6 * testing::Slowdown()));
  close(idle);
  // Pipelined requests on one connection are all answered, in order.
  const int piped = Connect(port_);
  ASSERT_TRUE(SendAll(piped, "GET /api/groups HTTP/1.1\r\nHost: x\r\n\r\nGET /api/jobs HTTP/1.1\r\nHost: x\r\n"
                             "Connection: close\r\n\r\n"));
  std::string both;
  ssize_t n;
  char chunk[4096];
  while ((n = recv(piped, chunk, sizeof(chunk), 0)) > 0) both.append(chunk, static_cast<size_t>(n));
  close(piped);
  EXPECT_EQ(both.find("\"groups\""), both.rfind("\"groups\"")) << both;
  EXPECT_LT(both.find("\"groups\""), both.find("\"jobs\"")) << both;
}

TEST_F(HttpLimitsTest, MoreConnectionsThanTheCapCloseTheOldestIdle) {
  const int cap = ConnectionLimits{}.max_connections;
  const int oldest = Connect(port_);
  ASSERT_GE(oldest, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < cap; ++i) held_.push_back(Connect(port_));
  EXPECT_TRUE(ClosedByServer(oldest, 2)) << "the connection idle longest makes room";
  close(oldest);
  int status = 0;
  TimeGet("/metrics", status);
  EXPECT_EQ(status, 200);
  EXPECT_LE(server_->http_open_connections(), cap);
}

}  // namespace
}  // namespace gantry
