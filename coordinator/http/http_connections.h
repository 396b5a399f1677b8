// The HTTP listener's open connections, kept so that no client can hold a request
// thread by being slow or idle. (cpp-httplib alone gives each connection a thread for
// its whole life: four clients sending a header line every 1.5 s, or a few hundred idle
// keep-alive connections, would starve every other request.)
//
// One poller thread watches every connection that is not being served. It reads what
// arrives, without blocking, until a whole request (request line and headers up to the
// empty line, and the body its Content-Length announces) is there; only then is the
// connection handed to one of the request threads, which serves that one request
// (parsing it and writing the response under a deadline) and hands the connection back. So a request thread is busy
// only while a request is being answered, and every connection is bounded:
//   - a request must arrive whole (head and body) within read_timeout of its first byte,
//     its head at most kMaxHeadBytes (else 408 or 431, and closed);
//   - a connection idle for idle_timeout (before its first request or between two) is
//     closed;
//   - at most max_connections are open: one more closes the connection idle longest,
//     else the one whose request head is oldest, else (every one being answered) itself;
//   - a request's body must arrive within read_timeout, and its response be taken
//     within write_timeout, of the moment a request thread took it.
// Requests already received (pipelined) are served in order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Stream;
}

namespace gantry {

struct ConnectionLimits {
  int threads = 4;               // request threads
  int max_connections = 128;
  double read_timeout_seconds = 5;
  double write_timeout_seconds = 10;
  double idle_timeout_seconds = 5;
  int max_requests_per_connection = 100;
  static constexpr size_t kMaxHeadBytes = 64 << 10;
  // A body up to this size is received before a request thread takes the request.
  static constexpr size_t kMaxBodyBytesWaited = 64 << 10;
};

class HttpConnections {
 public:
  // Serves one request whose head is readable from the stream; `last` says the
  // connection closes after it. Returns whether the connection may stay open.
  using ServeOne = std::function<bool(httplib::Stream& stream, bool last)>;

  HttpConnections(ConnectionLimits limits, ServeOne serve);
  ~HttpConnections();
  HttpConnections(const HttpConnections&) = delete;
  HttpConnections& operator=(const HttpConnections&) = delete;

  // Takes over an accepted socket (closing it when over the limits or shut down).
  void Adopt(int fd);
  // Closes every connection once the requests being answered are done; joins the
  // threads. Idempotent.
  void Shutdown();

  int open_connections();

 private:
  using Clock = std::chrono::steady_clock;
  enum class State { kWaiting, kQueued, kServing };
  struct Connection {
    int fd = -1;
    State state = State::kWaiting;
    std::string buffer;             // received, not yet served
    Clock::time_point idle_since;   // when it last finished a request (or opened)
    std::optional<Clock::time_point> head_started;  // first byte of the next request
    int requests = 0;
  };

  void Poll();
  void Work();
  // Reads what the socket has; false when the connection is to be closed.
  bool Receive(Connection& c);
  // Hands `id` to a request thread when its buffer holds a whole head.
  bool DispatchIfReady(uint64_t id, Connection& c);
  void CloseExpired(Clock::time_point now);
  // Makes room for one more connection; false when none can be closed.
  bool Evict();
  void Close(uint64_t id, const char* response = nullptr);
  void WakePoller();
  int PollTimeoutMs(Clock::time_point now) const;

  const ConnectionLimits limits_;
  const ServeOne serve_;
  int wake_fd_ = -1;  // eventfd: a connection came back or went away

  std::mutex mu_;
  std::condition_variable ready_cv_;
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::deque<uint64_t> ready_;  // heads received, waiting for a request thread
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread poller_;
  std::vector<std::thread> workers_;
};

}  // namespace gantry
