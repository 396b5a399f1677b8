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
// Bounds: a fixed pool of worker threads with a bounded queue; read and write time-outs
// on every connection; the request line and each header line capped by cpp-httplib (8 KiB), bodies
// (the login form only) by kMaxBodyBytes.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "coordinator/monitor_api.h"
#include "coordinator/token_auth.h"

namespace httplib {
class Server;
}

namespace gantry {

struct HttpOptions {
  std::string listen;           // HOST:PORT; port 0 picks a free one
  int threads = 4;
  int queue = 64;               // connections waiting for a thread
  double read_timeout_seconds = 5;
  double write_timeout_seconds = 10;
  double keep_alive_seconds = 2;
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
  // Stops accepting, finishes the requests in progress (each bounded by the time-outs)
  // and joins the threads. Idempotent.
  void Shutdown();

 private:
  HttpServer() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  int port_ = 0;
};

// The cookie the login form sets: the token, hex-encoded (a token may hold ';' or ',').
inline constexpr char kTokenCookie[] = "gantry_token";
std::string HexEncode(std::string_view bytes);

}  // namespace gantry
