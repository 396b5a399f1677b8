// The coordinator's HTTP listener (gantry-coordinator --http-listen): the dashboard (a
// single page compiled into the binary), its JSON endpoints and /metrics, served with
// cpp-httplib beside the gRPC service. Read-only: GET and HEAD only (405 otherwise),
// except the login form's POST /login.
//
//   GET /                          the dashboard (index.html, app.js, style.css)
//   GET /api/jobs?state=&page_size=&page_token=   ListJobs, with progress and ETA
//   GET /api/jobs/ID               the job's report (epoch rows, summary, stragglers)
//   GET /api/jobs/ID/samples.png   the newest sample grid of its run folder
//   GET /api/jobs/ID/generated.png the newest generated grid (RUN/generate-*/grid.png)
//   GET /api/jobs/ID/rollout       a flow run's rollout curve (rollout.csv)
//   GET /api/groups                ListGroups
//   GET /metrics                   Prometheus text
//
// Auth: with a token (--token-file), /api/ and /metrics need `Authorization: Bearer
// <token>` or the cookie the login form sets (HttpOnly, SameSite=Strict); the page and
// its script and style hold no data and load without one. Compared in constant time;
// 401 otherwise.
//
// Bounds: connections are kept by HttpConnections (http_connections.h), so slow or idle
// clients hold no request thread: a request head must arrive whole within the read
// time-out, idle connections close after the idle time-out, at most max_connections are
// open (the one idle longest is closed for a new one). The request line and each header
// line are capped by cpp-httplib (8 KiB), the head by kMaxHeadBytes, bodies (the login
// form only) by kMaxBodyBytes.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "coordinator/http/http_connections.h"
#include "coordinator/http/monitor_api.h"
#include "coordinator/service/token_auth.h"

namespace httplib {
class Server;
}

namespace gantry {

struct HttpOptions {
  std::string listen;           // HOST:PORT; port 0 picks a free one
  ConnectionLimits limits;
  static constexpr size_t kMaxBodyBytes = 4096;
};

class HttpServer {
 public:
  // Binds and starts serving. `auth` may be null (no token required); `api` and `auth`
  // must outlive the server. INVALID_ARGUMENT for a bad address, UNAVAILABLE when it
  // cannot be bound, both naming --http-listen.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpOptions& options, MonitorApi& api,
                                                           const TokenAuth* auth);
  ~HttpServer();

  int port() const { return port_; }
  int open_connections();
  // Stops accepting, finishes the requests in progress (each bounded by the time-outs)
  // and joins the threads. Idempotent.
  void Shutdown();

 private:
  HttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  HttpConnections* connections_ = nullptr;  // server_'s
  std::thread listener_;
  int port_ = 0;
};

// The cookie the login form sets: the token, hex-encoded (a token may hold ';' or ',').
inline constexpr char kTokenCookie[] = "gantry_token";
std::string HexEncode(std::string_view bytes);

}  // namespace gantry
