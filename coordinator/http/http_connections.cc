#include "coordinator/http/http_connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "spdlog/spdlog.h"

namespace gantry {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kMaxPollWaitMs = 1000;
constexpr char kTimeoutResponse[] =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
constexpr char kTooLargeResponse[] =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

SteadyClock::duration Seconds(double s) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(s));
}

// Waits until `fd` is ready for `events` or `deadline` passes.
bool WaitFor(int fd, short events, SteadyClock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kMaxPollWaitMs)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Where the request head that starts `buffer` ends (after its empty line); npos while
// it has not all arrived.
size_t HeadEnd(const std::string& buffer) {
  const size_t crlf = buffer.find("\r\n\r\n"), lf = buffer.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) return std::string::npos;
  return crlf != std::string::npos && (lf == std::string::npos || crlf < lf) ? crlf + 4 : lf + 2;
}

bool HeadComplete(const std::string& buffer) { return HeadEnd(buffer) != std::string::npos; }

// The value of header `name` (lower case, with its colon) in `head`, lower case; "" when absent.
std::string HeaderValue(const std::string& head, const std::string& name) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t at = lower.find("\n" + name);
  if (at == std::string::npos) return "";
  const size_t start = at + 1 + name.size(), end = lower.find_first_of("\r\n", start);
  std::string value = lower.substr(start, end == std::string::npos ? std::string::npos : end - start);
  value.erase(0, value.find_first_not_of(" \t"));
  return value;
}

// Whether `buffer` holds a whole request, its body too: a slow body must not hold a
// request thread either. A body is waited for up to kMaxBodyBytesWaited (a larger one is
// refused by cpp-httplib's payload cap anyway); a client that expects "100 Continue"
// before sending its body is handed over with the head.
bool RequestComplete(const std::string& buffer) {
  const size_t end = HeadEnd(buffer);
  if (end == std::string::npos) return false;
  const std::string head = buffer.substr(0, end);
  if (HeaderValue(head, "expect:") == "100-continue") return true;
  if (HeaderValue(head, "transfer-encoding:").find("chunked") != std::string::npos) {
    return buffer.find("\r\n0\r\n\r\n", end - 2) != std::string::npos ||
           buffer.size() - end > ConnectionLimits::kMaxBodyBytesWaited;
  }
  const std::string length = HeaderValue(head, "content-length:");
  size_t bytes = 0;
  for (char c : length) {
    if (c < '0' || c > '9' || bytes > ConnectionLimits::kMaxBodyBytesWaited) return true;  // httplib refuses it
    bytes = bytes * 10 + static_cast<size_t>(c - '0');
  }
  return bytes > ConnectionLimits::kMaxBodyBytesWaited || buffer.size() - end >= bytes;
}

std::string PeerText(int fd, bool local, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  const int rc = local ? getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length)
                       : getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length);
  char text[INET6_ADDRSTRLEN] = "";
  port = 0;
  if (rc != 0) return "";
  if (address.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  return text;
}

// One request's view of a connection for cpp-httplib: first the bytes the poller
// already received (the head, perhaps more), then the socket, every read and write
// bounded by the request's deadlines. The socket is non-blocking.
class BufferedSocketStream final : public httplib::Stream {
 public:
  BufferedSocketStream(int fd, std::string& buffer, SteadyClock::time_point read_deadline,
                       SteadyClock::time_point write_deadline)
      : fd_(fd), buffer_(buffer), read_deadline_(read_deadline), write_deadline_(write_deadline) {}

  size_t consumed() const { return consumed_; }

  bool is_readable() const override {
    return consumed_ < buffer_.size() || WaitFor(fd_, POLLIN, read_deadline_);
  }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, write_deadline_); }

  ssize_t read(char* ptr, size_t size) override {
    if (consumed_ < buffer_.size()) {
      const size_t n = std::min(size, buffer_.size() - consumed_);
      std::memcpy(ptr, buffer_.data() + consumed_, n);
      consumed_ += n;
      return static_cast<ssize_t>(n);
    }
    while (WaitFor(fd_, POLLIN, read_deadline_)) {
      const ssize_t n = recv(fd_, ptr, size, 0);
      if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return n;
    }
    return -1;
  }

  ssize_t write(const char* ptr, size_t size) override {
    while (WaitFor(fd_, POLLOUT, write_deadline_)) {
      const ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return n;
    }
    return -1;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = PeerText(fd_, false, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = PeerText(fd_, true, port); }
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  std::string& buffer_;
  size_t consumed_ = 0;
  SteadyClock::time_point read_deadline_, write_deadline_;
};

}  // namespace

HttpConnections::HttpConnections(ConnectionLimits limits, ServeOne serve)
    : limits_(limits), serve_(std::move(serve)), wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  poller_ = std::thread([this] { Poll(); });
  for (int i = 0; i < limits_.threads; ++i) workers_.emplace_back([this] { Work(); });
}

HttpConnections::~HttpConnections() {
  Shutdown();
  if (wake_fd_ >= 0) close(wake_fd_);
}

int HttpConnections::open_connections() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(connections_.size());
}

void HttpConnections::WakePoller() {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void HttpConnections::Adopt(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (static_cast<int>(connections_.size()) >= limits_.max_connections && !Evict())) {
      ::close(fd);
      return;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->idle_since = SteadyClock::now();
    connections_[next_id_++] = std::move(c);
  }
  WakePoller();
}

// Under mu_. The connection idle longest, else the one whose head started first.
bool HttpConnections::Evict() {
  auto victim = connections_.end();
  auto rank = [](const Connection& c) {
    return std::make_pair(c.head_started.has_value(), c.head_started.value_or(c.idle_since));
  };
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->second->state != State::kWaiting) continue;
    if (victim == connections_.end() || rank(*it->second) < rank(*victim->second)) victim = it;
  }
  if (victim == connections_.end()) return false;
  Close(victim->first);
  return true;
}

// Under mu_, for a connection no request thread holds.
void HttpConnections::Close(uint64_t id, const char* response) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  if (response != nullptr) (void)!send(it->second->fd, response, std::strlen(response), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(it->second->fd);
  connections_.erase(it);
}

bool HttpConnections::Receive(Connection& c) {
  char chunk[4096];
  while (true) {
    const ssize_t n = recv(c.fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      if (!c.head_started) c.head_started = SteadyClock::now();
      c.buffer.append(chunk, static_cast<size_t>(n));
      if (c.buffer.size() > ConnectionLimits::kMaxHeadBytes && !HeadComplete(c.buffer)) return false;
      // More than one request's worth waits in the socket, for the request thread.
      if (c.buffer.size() > ConnectionLimits::kMaxHeadBytes + ConnectionLimits::kMaxBodyBytesWaited) return true;
      continue;
    }
    if (n == 0) return false;  // the client closed it
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
}

// Under mu_.
bool HttpConnections::DispatchIfReady(uint64_t id, Connection& c) {
  if (!RequestComplete(c.buffer) &&
      c.buffer.size() <= ConnectionLimits::kMaxHeadBytes + ConnectionLimits::kMaxBodyBytesWaited) {
    return false;
  }
  c.state = State::kQueued;
  ready_.push_back(id);
  ready_cv_.notify_one();
  return true;
}

// Under mu_.
void HttpConnections::CloseExpired(SteadyClock::time_point now) {
  std::vector<std::pair<uint64_t, const char*>> expired;
  for (const auto& [id, c] : connections_) {
    if (c->state != State::kWaiting) continue;
    if (c->head_started && now - *c->head_started > Seconds(limits_.read_timeout_seconds)) {
      expired.emplace_back(id, kTimeoutResponse);
    } else if (!c->head_started && now - c->idle_since > Seconds(limits_.idle_timeout_seconds)) {
      expired.emplace_back(id, nullptr);
    }
  }
  for (const auto& [id, response] : expired) Close(id, response);
}

// Under mu_: until the nearest head or idle deadline, at most kMaxPollWaitMs.
int HttpConnections::PollTimeoutMs(SteadyClock::time_point now) const {
  SteadyClock::time_point next = now + std::chrono::milliseconds(kMaxPollWaitMs);
  for (const auto& [id, c] : connections_) {
    if (c->state != State::kWaiting) continue;
    next = std::min(next, c->head_started ? *c->head_started + Seconds(limits_.read_timeout_seconds)
                                          : c->idle_since + Seconds(limits_.idle_timeout_seconds));
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
  return static_cast<int>(std::clamp<int64_t>(ms, 0, kMaxPollWaitMs));
}

void HttpConnections::Poll() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    ids.assign(1, 0);
    for (const auto& [id, c] : connections_) {
      if (c->state != State::kWaiting) continue;
      fds.push_back(pollfd{c->fd, POLLIN, 0});
      ids.push_back(id);
    }
    const int timeout_ms = PollTimeoutMs(SteadyClock::now());
    lock.unlock();
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    uint64_t drained;
    while (::read(wake_fd_, &drained, sizeof(drained)) > 0) {
    }
    lock.lock();
    for (size_t i = 1; ready > 0 && i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = connections_.find(ids[i]);
      // Evicted meanwhile (its descriptor may already be another connection's).
      if (it == connections_.end() || it->second->state != State::kWaiting) continue;
      Connection& c = *it->second;
      if (!Receive(c)) {
        Close(ids[i], c.buffer.size() > ConnectionLimits::kMaxHeadBytes ? kTooLargeResponse : nullptr);
        continue;
      }
      DispatchIfReady(ids[i], c);
    }
    CloseExpired(SteadyClock::now());
  }
}

void HttpConnections::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ready_cv_.wait(lock, [&] { return !ready_.empty() || stopping_; });
    if (stopping_) return;
    const uint64_t id = ready_.front();
    ready_.pop_front();
    auto it = connections_.find(id);
    if (it == connections_.end()) continue;
    Connection& c = *it->second;  // no other thread touches a connection being served
    c.state = State::kServing;
    const bool last = c.requests + 1 >= limits_.max_requests_per_connection;
    lock.unlock();
    const SteadyClock::time_point start = SteadyClock::now();
    BufferedSocketStream stream(c.fd, c.buffer, start + Seconds(limits_.read_timeout_seconds),
                                start + Seconds(limits_.write_timeout_seconds));
    bool keep = false;
    try {
      keep = serve_(stream, last) && !last;
    } catch (const std::exception& e) {
      spdlog::error("--http-listen: a request failed: {}", e.what());
    }
    c.buffer.erase(0, stream.consumed());
    lock.lock();
    ++c.requests;
    if (!keep || stopping_) {
      Close(id);
      continue;
    }
    c.state = State::kWaiting;
    c.idle_since = SteadyClock::now();
    c.head_started.reset();
    if (!c.buffer.empty()) c.head_started = c.idle_since;  // the next request has begun
    if (!DispatchIfReady(id, c)) WakePoller();
  }
}

void HttpConnections::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !poller_.joinable()) return;
    stopping_ = true;
  }
  ready_cv_.notify_all();
  WakePoller();
  if (poller_.joinable()) poller_.join();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, c] : connections_) ::close(c->fd);
  connections_.clear();
  ready_.clear();
}

}  // namespace gantry
