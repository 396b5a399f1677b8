#include "coordinator/http/http_server.h"

#include <httplib.h>

#include <chrono>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/host_port.h"
#include "coordinator/http/dashboard_assets.h"
#include "coordinator/http/http_connections.h"
#include "report/proto_json.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

constexpr char kJobRoute[] = "/api/jobs/([A-Za-z0-9_-]{1,64})";
// cpp-httplib's accepting thread hands each connection to the task queue; here the
// task only passes the socket to HttpConnections (GuardedServer), so it runs at once.
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override {}
};

// cpp-httplib's server with its connections kept by HttpConnections: it parses and
// routes one request at a time, on a request thread, once the whole head has arrived.
class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const ConnectionLimits& limits)
      : connections_(limits, [this](httplib::Stream& stream, bool last) { return ServeOne(stream, last); }) {
    new_task_queue = [] { return new InlineTaskQueue(); };
  }
  ~GuardedServer() override { connections_.Shutdown(); }

  HttpConnections& connections() { return connections_; }

  // cpp-httplib listens with a backlog of 5: a burst of connections (a page's files, a
  // client flooding it) would wait for SYN retries of a second or more. Called after the
  // bind; listen() on a listening socket sets its backlog anew.
  void WidenBacklog() { ::listen(svr_sock_, SOMAXCONN); }

 private:
  // Called by cpp-httplib's accepting thread for each new connection (the hook its own
  // TLS server overrides too).
  bool process_and_close_socket(socket_t sock) override {
    connections_.Adopt(sock);
    return true;
  }

  bool ServeOne(httplib::Stream& stream, bool last) {
    bool closed = false;
    const bool answered = process_request(stream, last, closed, nullptr);
    return answered && !closed;
  }

  HttpConnections connections_;
};

struct HostPort {
  std::string host;
  int port = 0;
};

absl::StatusOr<HostPort> ParseListen(const std::string& address) {
  if (absl::Status s = CheckAddressPort("--http-listen", address, PortZero::kAnyFree); !s.ok()) return s;
  const size_t colon = address.rfind(':');
  HostPort out;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(address.substr(colon + 1), &out.port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http-listen ", address, ": give HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080)"));
  }
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  return out;
}

int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kResourceExhausted: return 413;
    case absl::StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

void SendError(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatusOf(status);
  res.set_content(DumpJson({{"error", std::string(status.message())}}), "application/json");
}

void SendJson(httplib::Response& res, const absl::StatusOr<nlohmann::json>& doc) {
  if (!doc.ok()) return SendError(res, doc.status());
  res.set_header("Cache-Control", "no-store");
  res.set_content(DumpJson(*doc), "application/json");
}

std::optional<std::string> HexDecode(absl::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int value = 0;
    for (char c : hex.substr(i, 2)) {
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return std::nullopt;
      value = value * 16 + digit;
    }
    out += static_cast<char>(value);
  }
  return out;
}

// The token of the login cookie, when the request carries one.
std::optional<std::string> CookieToken(const httplib::Request& req) {
  for (absl::string_view part : absl::StrSplit(req.get_header_value("Cookie"), ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, absl::StrCat(kTokenCookie, "="))) return HexDecode(part);
  }
  return std::nullopt;
}

bool Authorized(const httplib::Request& req, const TokenAuth* auth) {
  if (auth == nullptr) return true;
  if (req.has_header("Authorization")) return auth->Check(req.get_header_value("Authorization")).ok();
  if (std::optional<std::string> token = CookieToken(req)) return auth->Check("Bearer " + *token).ok();
  return false;
}

bool NeedsToken(const std::string& path) { return path == "/metrics" || path.rfind("/api/", 0) == 0; }

// Methods and the token, before anything else, so no handler sees a refused request:
// only GET and HEAD (and POST /login) pass, and the data (/metrics, /api/) needs the token.
httplib::Server::HandlerResponse ScreenRequest(const httplib::Request& req, httplib::Response& res,
                                               const TokenAuth* auth) {
  const bool login = req.method == "POST" && req.path == "/login";
  if (req.method != "GET" && req.method != "HEAD" && !login) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("read-only: GET and HEAD only\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (NeedsToken(req.path) && !Authorized(req, auth)) {
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer realm=\"gantry\"");
    res.set_content(DumpJson({{"error", "missing or wrong token: send `Authorization: Bearer <token>` or log in"}}),
                    "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  return httplib::Server::HandlerResponse::Unhandled;
}

// The dashboard's files, index.html at "/".
void ServeDashboard(httplib::Server& server) {
  for (const DashboardAsset& asset : DashboardAssets()) {
    const std::string route = asset.path == "/index.html" ? "/" : std::string(asset.path);
    server.Get(route, [&asset](const httplib::Request&, httplib::Response& res) {
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                     "frame-ancestors 'none'");
      res.set_content(std::string(asset.bytes), std::string(asset.content_type));
    });
  }
}

// POST /login with the token as a form field: a cookie holding it, back to the dashboard.
void Login(const httplib::Request& req, httplib::Response& res, const TokenAuth* auth) {
  res.status = 303;
  const std::string token = req.get_param_value("token");
  if (auth != nullptr && !auth->Check("Bearer " + token).ok()) {
    res.set_header("Location", "/?login=failed");
    return;
  }
  if (auth != nullptr) {
    res.set_header("Set-Cookie", absl::StrCat(kTokenCookie, "=", HexEncode(token),
                                              "; Path=/; HttpOnly; SameSite=Strict"));
  }
  res.set_header("Location", "/");
}

void SendJobs(MonitorApi& api, const httplib::Request& req, httplib::Response& res) {
  int page_size = 0;
  if (req.has_param("page_size") && !absl::SimpleAtoi(req.get_param_value("page_size"), &page_size)) {
    return SendError(res, absl::InvalidArgumentError("page_size: not a number"));
  }
  SendJson(res, api.Jobs(req.get_param_value("state"), page_size, req.get_param_value("page_token")));
}

void SendSampleGrid(MonitorApi& api, const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<SampleGrid> grid = api.NewestSampleGrid(req.matches[1]);
  if (!grid.ok()) return SendError(res, grid.status());
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Gantry-Sample", absl::StrCat("batch ", grid->batch_size, " epoch ", grid->epoch));
  res.set_content(std::move(grid->png), "image/png");
}

void SendGeneratedGrid(MonitorApi& api, const httplib::Request& req, httplib::Response& res) {
  absl::StatusOr<GeneratedGrid> grid = api.NewestGeneratedGrid(req.matches[1]);
  if (!grid.ok()) return SendError(res, grid.status());
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Gantry-Generated", grid->folder);
  res.set_content(std::move(grid->png), "image/png");
}

void SendMetrics(MonitorApi& api, httplib::Response& res) {
  absl::StatusOr<std::string> text = api.MetricsText();
  if (!text.ok()) return SendError(res, text.status());
  res.set_content(*text, "text/plain; version=0.0.4; charset=utf-8");
}

// The data: JSON documents, the newest sample grid, Prometheus text.
void ServeData(httplib::Server& server, MonitorApi& api) {
  using Request = httplib::Request;
  using Response = httplib::Response;
  server.Get("/api/jobs", [&api](const Request& req, Response& res) { SendJobs(api, req, res); });
  server.Get(kJobRoute, [&api](const Request& req, Response& res) { SendJson(res, api.Job(req.matches[1])); });
  server.Get(absl::StrCat(kJobRoute, "/samples.png"),
             [&api](const Request& req, Response& res) { SendSampleGrid(api, req, res); });
  server.Get(absl::StrCat(kJobRoute, "/generated.png"),
             [&api](const Request& req, Response& res) { SendGeneratedGrid(api, req, res); });
  server.Get(absl::StrCat(kJobRoute, "/rollout"),
             [&api](const Request& req, Response& res) { SendJson(res, api.Rollout(req.matches[1])); });
  server.Get("/api/groups", [&api](const Request&, Response& res) { SendJson(res, api.Groups()); });
  server.Get("/metrics", [&api](const Request&, Response& res) { SendMetrics(api, res); });
}

void Routes(httplib::Server& server, MonitorApi& api, const TokenAuth* auth) {
  server.set_pre_routing_handler(
      [auth](const httplib::Request& req, httplib::Response& res) { return ScreenRequest(req, res, auth); });
  ServeDashboard(server);
  server.Post("/login", [auth](const httplib::Request& req, httplib::Response& res) { Login(req, res, auth); });
  ServeData(server, api);
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    spdlog::error("--http-listen: {} {} failed with an exception", req.method, req.path);
    SendError(res, absl::InternalError("internal error"));
  });
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options, MonitorApi& api,
                                                              const TokenAuth* auth) {
  absl::StatusOr<HostPort> address = ParseListen(options.listen);
  if (!address.ok()) return address.status();
  std::unique_ptr<HttpServer> http(new HttpServer());
  auto guarded = std::make_unique<GuardedServer>(options.limits);
  http->connections_ = &guarded->connections();
  http->server_ = std::move(guarded);
  httplib::Server& server = *http->server_;
  // What the Keep-Alive response header announces; HttpConnections enforces it.
  server.set_keep_alive_timeout(static_cast<time_t>(std::max(1.0, options.limits.idle_timeout_seconds)));
  server.set_keep_alive_max_count(static_cast<size_t>(options.limits.max_requests_per_connection));
  server.set_payload_max_length(HttpOptions::kMaxBodyBytes);
  // cpp-httplib sets SO_REUSEPORT by default, which would let a second coordinator share
  // the port silently (as gRPC's default would): a busy port must be an error.
  server.set_socket_options([](int sock) {
    int on = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  });
  Routes(server, api, auth);

  http->port_ = address->port == 0 ? server.bind_to_any_port(address->host) :
                (server.bind_to_port(address->host, address->port) ? address->port : -1);
  if (http->port_ > 0) static_cast<GuardedServer&>(server).WidenBacklog();
  if (http->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("--http-listen ", options.listen,
                                               ": cannot listen there (is the port in use, or the address not one "
                                               "of this machine's?)"));
  }
  http->listener_ = std::thread([&server] { server.listen_after_bind(); });
  // stop() only takes effect on a running server: wait (bounded) until it runs.
  for (int i = 0; i < 500 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!server.is_running()) {
    http->Shutdown();
    return absl::UnavailableError(absl::StrCat("--http-listen ", options.listen, ": the listener did not start"));
  }
  return http;
}

int HttpServer::open_connections() { return connections_ == nullptr ? 0 : connections_->open_connections(); }

void HttpServer::Shutdown() {
  if (server_ == nullptr) return;
  server_->stop();
  if (listener_.joinable()) listener_.join();
  if (connections_ != nullptr) connections_->Shutdown();  // after the listener: nothing new comes
}

HttpServer::~HttpServer() { Shutdown(); }

}  // namespace gantry
