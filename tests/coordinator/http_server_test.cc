// The HTTP listener of a real CoordinatorServer (--http-listen) with a token, driven
// over gRPC by a fake worker group: the token rules, read-only methods, the JSON
// endpoints against what gRPC answers, /metrics through the strict Prometheus reader,
// the sample grid, the newest generated grid, and requests that try to leave the run folder.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include <grpcpp/grpcpp.h>

#include "coordinator/app/server.h"
#include "report/proto_json.h"
#include "gantry/v1/coordinator.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/process_harness.h"
#include "tests/coordinator/prometheus_parser.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kHttpToken[] = "0123456789abcdef0123456789abcdef";
constexpr char kPng[] = "\x89PNG\r\n\x1a\n";

// Sends `request` as raw bytes (no client library to normalise the path) and returns
// the whole response, or "" when the server did not answer within 5 s.
std::string RawRequest(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return response;
}

std::string RawGet(int port, const std::string& target, const std::string& token = kHttpToken) {
  return RawRequest(port, absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ",
                                       token, "\r\nConnection: close\r\n\r\n"));
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("http");
    fs::create_directories(dir_ + "/data/mnist");
    std::ofstream(dir_ + "/token") << kHttpToken;
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.db_path = dir_ + "/gantry.db";
    options.data_roots = {dir_ + "/data"};
    options.token_file = dir_ + "/token";
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_GT(server_->http_port(), 0);
    http_ = std::make_unique<httplib::Client>("127.0.0.1", server_->http_port());
    http_->set_connection_timeout(5);
    http_->set_read_timeout(5);
    grpc_address_ = absl::StrCat("127.0.0.1:", server_->port());
  }

  httplib::Headers Bearer(const std::string& token = kHttpToken) { return {{"Authorization", "Bearer " + token}}; }

  nlohmann::json GetJson(const std::string& path) {
    httplib::Result r = http_->Get(path.c_str(), Bearer());
    EXPECT_TRUE(r) << path;
    if (!r) return nullptr;
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    return nlohmann::json::parse(r->body);
  }

  // A sweep job, acquired by a 2-rank fake group, with two epoch rows of batch 32 and
  // progress in the first epoch of batch 64, two straggler events of rank 1 and one of
  // rank 0, and a run folder holding run.json and the grid of batch 32's epoch 2.
  // RunAJob's second epoch row: loss scaling, skipped steps, a quality score and energy.
  static v1::EpochMetrics SecondEpoch() {
    v1::EpochMetrics second = testing::ScoredEpochRow(32, 2, 2);
    second.set_loss_scale_g(32768);
    second.set_loss_scale_d(65536);
    second.set_skipped_steps_g(2);
    second.set_energy_estimated(1);
    return second;
  }

  std::string RunAJob(const std::string& name) {
    auto stub = v1::Coordinator::NewStub(grpc::CreateChannel(grpc_address_, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", kHttpToken));
    v1::SubmitJobRequest submit = testing::SweepRequest(dir_ + "/data/mnist", {32, 64}, 2, 2);
    submit.set_name(name);
    v1::Job job;
    grpc::Status s = stub->SubmitJob(&context, submit, &job);
    EXPECT_TRUE(s.ok()) << s.error_message();

    group_ = std::make_unique<testing::FakeWorkerGroup>(grpc_address_, 2, kHttpToken);
    EXPECT_TRUE(group_->Register().ok());
    EXPECT_TRUE(group_->AcquireJob(10));
    run_ = dir_ + "/runs/" + job.id();
    fs::create_directories(run_ + "/samples/b0032");
    std::ofstream(run_ + "/run.json") << "{}";
    std::ofstream(run_ + "/samples/b0032/epoch_002.png") << kPng << "the grid";
    v1::ReportProgressRequest first;
    first.mutable_checkpoint()->set_run_folder(run_);
    v1::EpochMetrics one = testing::EpochRow(32, 1, 2);
    one.set_quality_fd(-1);  // not scored
    one.set_energy_j(100);
    one.set_energy_estimated(1);
    *first.add_epochs() = one;
    *first.add_epochs() = SecondEpoch();
    for (int rank : {1, 1, 0}) {
      v1::StragglerEvent* e = first.add_stragglers();
      e->set_batch_size(32);
      e->set_epoch(1);
      e->set_step(first.stragglers_size());
      e->set_rank(rank);
      e->set_ratio(1.5 + rank);
    }
    v1::Progress* p = first.mutable_progress();
    p->set_batch_size(64);
    p->set_epoch(1);
    p->set_step(4);
    p->set_steps_per_epoch(15);
    p->set_global_step(4);
    p->set_samples_per_s(320);
    p->set_d_loss(1.25);
    p->set_g_loss(0.5);
    s = group_->Report(first, nullptr);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return job.id();
  }

  std::string dir_, run_, grpc_address_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<httplib::Client> http_;
  std::unique_ptr<testing::FakeWorkerGroup> group_;
};

TEST_F(HttpServerTest, DataNeedsTheTokenByHeaderOrLoginCookie) {
  for (const char* path : {"/api/jobs", "/api/groups", "/metrics", "/api/jobs/job-1"}) {
    httplib::Result none = http_->Get(path);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 401) << path;
    EXPECT_EQ(http_->Get(path, Bearer("0123456789abcdef0123456789abcdeX"))->status, 401) << path;
    EXPECT_EQ(http_->Get(path, Bearer(std::string(kHttpToken) + "0"))->status, 401) << path << ": a longer token";
    EXPECT_EQ(http_->Get(path, httplib::Headers{{"Authorization", kHttpToken}})->status, 401) << path << ": no scheme";
  }
  EXPECT_EQ(http_->Get("/api/jobs", Bearer())->status, 200);
  EXPECT_EQ(http_->Get("/metrics", Bearer())->status, 200);
  // The page, its script and style carry no data and load without a token.
  for (const char* path : {"/", "/app.js", "/style.css"}) EXPECT_EQ(http_->Get(path)->status, 200) << path;
  EXPECT_THAT(http_->Get("/")->body, HasSubstr("<title>gantry</title>"));

  // The login form: a wrong token sets no cookie; the right one sets a cookie that works.
  httplib::Result wrong = http_->Post("/login", "token=nope", "application/x-www-form-urlencoded");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 303);
  EXPECT_EQ(wrong->get_header_value("Location"), "/?login=failed");
  EXPECT_FALSE(wrong->has_header("Set-Cookie"));
  httplib::Result right =
      http_->Post("/login", absl::StrCat("token=", kHttpToken), "application/x-www-form-urlencoded");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 303);
  const std::string cookie = right->get_header_value("Set-Cookie");
  EXPECT_THAT(cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("SameSite=Strict"));
  const std::string pair = cookie.substr(0, cookie.find(';'));
  EXPECT_EQ(http_->Get("/api/jobs", httplib::Headers{{"Cookie", "other=1; " + pair}})->status, 200);
  EXPECT_EQ(http_->Get("/api/jobs", httplib::Headers{{"Cookie", std::string(kTokenCookie) + "=00"}})->status, 401);
  EXPECT_EQ(http_->Get("/api/jobs", httplib::Headers{{"Cookie", std::string(kTokenCookie) + "=zz"}})->status, 401);
}

TEST_F(HttpServerTest, RefusesEveryMethodButGetAndHead) {
  for (const char* path : {"/api/jobs", "/metrics", "/", "/api/jobs/job-1"}) {
    EXPECT_EQ(http_->Post(path, Bearer(), "x", "text/plain")->status, 405) << path;
    EXPECT_EQ(http_->Put(path, Bearer(), "x", "text/plain")->status, 405) << path;
    EXPECT_EQ(http_->Delete(path, Bearer())->status, 405) << path;
    EXPECT_EQ(http_->Patch(path, Bearer(), "x", "text/plain")->status, 405) << path;
    EXPECT_EQ(http_->Options(path, Bearer())->status, 405) << path;
  }
  httplib::Result post = http_->Post("/api/jobs", Bearer(), "x", "text/plain");
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(http_->Head("/api/jobs", Bearer())->status, 200);
  // A login form larger than the body cap is refused before it is read.
  EXPECT_EQ(http_->Post("/login", std::string(HttpOptions::kMaxBodyBytes + 1, 'a'),
                        "application/x-www-form-urlencoded")->status,
            413);
}

TEST_F(HttpServerTest, JsonEndpointsMirrorTheGrpcApi) {
  const std::string id = RunAJob("dashboard job");
  const nlohmann::json jobs = GetJson("/api/jobs");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  const nlohmann::json& listed = jobs["jobs"][0];
  EXPECT_EQ(listed["id"], id);
  EXPECT_EQ(listed["name"], "dashboard job");
  EXPECT_EQ(listed["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(listed["progress"]["samples_per_s"], 320);
  // Done: batch 32 whole (2 epochs of 30 steps) + 4 steps of 64, of 2 x 960 + 2 x 960 samples.
  EXPECT_DOUBLE_EQ(listed["outlook"]["fraction_done"].get<double>(), (1920.0 + 256.0) / 3840.0);
  EXPECT_DOUBLE_EQ(listed["outlook"]["eta_seconds"].get<double>(), (3840.0 - 2176.0) / 320.0);
  EXPECT_EQ(GetJson("/api/jobs?state=queued")["jobs"].size(), 0u);
  EXPECT_EQ(http_->Get("/api/jobs?state=bogus", Bearer())->status, 400);
  EXPECT_EQ(http_->Get("/api/jobs?page_size=x", Bearer())->status, 400);

  const nlohmann::json job = GetJson("/api/jobs/" + id);
  ASSERT_EQ(job["epochs"].size(), 2u);
  EXPECT_EQ(job["epochs"][1]["epoch"], 2);
  EXPECT_EQ(job["epochs"][1]["seconds"], testing::EpochRow(32, 2, 2).seconds());
  EXPECT_EQ(job["epochs"][1]["loss_scale_g"], 32768);
  // The quality and energy columns travel from the worker's report to the page.
  EXPECT_EQ(job["epochs"][0]["quality_fd"], -1);
  EXPECT_EQ(job["epochs"][1]["quality_fd"], 12.5);
  EXPECT_EQ(job["epochs"][1]["quality_confidence"], 0.875);
  EXPECT_TRUE(job["epochs"][1]["quality_kid"].is_null());  // a row without a KID
  EXPECT_EQ(job["epochs"][1]["energy_j"], 250);
  EXPECT_EQ(job["epochs"][1]["energy_estimated"], 1);
  ASSERT_EQ(job["summary"].size(), 1u);
  EXPECT_EQ(job["summary"][0]["batch_size"], 32);
  EXPECT_DOUBLE_EQ(job["summary"][0]["total_seconds"].get<double>(),
                   testing::EpochRow(32, 1, 2).seconds() + testing::EpochRow(32, 2, 2).seconds());
  EXPECT_EQ(job["stragglers"].size(), 3u);
  EXPECT_EQ(job["stragglers_by_rank"],
            nlohmann::json::parse(R"([{"rank":0,"events":1,"max_ratio":1.5},{"rank":1,"events":2,"max_ratio":2.5}])"));
  EXPECT_EQ(job["sample_grid"], nlohmann::json::parse(R"({"batch_size":32,"epoch":2})"));
  EXPECT_EQ(job["rollout"], false);
  EXPECT_EQ(http_->Get(("/api/jobs/" + id + "/rollout").c_str(), Bearer())->status, 404);

  // The same document as `gantry --json report` prints from the gRPC answer.
  auto stub = v1::Coordinator::NewStub(grpc::CreateChannel(grpc_address_, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", kHttpToken));
  v1::GetJobReportRequest request;
  request.set_job_id(id);
  v1::JobReport report;
  ASSERT_TRUE(stub->GetJobReport(&context, request, &report).ok());
  const nlohmann::json cli_shape = JobReportJsonValue(report);
  for (const char* key : {"epochs", "summary", "stragglers"}) EXPECT_EQ(job[key], cli_shape[key]) << key;

  const nlohmann::json groups = GetJson("/api/groups");
  ASSERT_EQ(groups["groups"].size(), 1u);
  EXPECT_EQ(groups["groups"][0]["world_size"], 2);
  EXPECT_EQ(groups["groups"][0]["job_id"], id);
  EXPECT_EQ(http_->Get("/api/jobs/job-999", Bearer())->status, 404);

  std::ofstream(run_ + "/rollout.csv") << "step,rel_l2\n1,0.5\n2,0.75\n";
  EXPECT_EQ(GetJson("/api/jobs/" + id)["rollout"], true);
  EXPECT_EQ(GetJson("/api/jobs/" + id + "/rollout")["rows"][1][1], 0.75);
}

TEST_F(HttpServerTest, MetricsAreValidPrometheusTextWithTheJobsFigures) {
  const std::string id = RunAJob("a \"quoted\" \\ name");
  httplib::Result r = http_->Get("/metrics", Bearer());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  std::string error;
  std::optional<testing::Exposition> e = testing::ParsePrometheusText(r->body, &error);
  ASSERT_TRUE(e.has_value()) << error << "\n" << r->body;
  for (const auto& [name, family] : e->families) {
    EXPECT_FALSE(family.help.empty()) << name << " has no HELP";
    EXPECT_FALSE(family.type.empty()) << name << " has no TYPE";
  }
  EXPECT_EQ(e->Value("gantry_jobs", {{"state", "running"}}), 1);
  EXPECT_EQ(e->Value("gantry_jobs", {{"state", "queued"}}), 0);
  EXPECT_EQ(e->Value("gantry_groups", {{"state", "busy"}}), 1);
  EXPECT_EQ(e->Value("gantry_group_ranks", {{"group_id", group_->group_id()}}), 2);
  EXPECT_EQ(e->Value("gantry_job_info", {{"job_id", id}, {"name", "a \"quoted\" \\ name"}}), 1)
      << "the name comes back unescaped";
  EXPECT_EQ(e->Value("gantry_job_samples_per_second", {{"job_id", id}, {"batch_size", "64"}}), 320);
  const v1::EpochMetrics row = testing::EpochRow(32, 2, 2);
  EXPECT_EQ(e->Value("gantry_job_epoch_seconds", {{"job_id", id}, {"batch_size", "32"}}), row.seconds());
  EXPECT_DOUBLE_EQ(*e->Value("gantry_job_step_p50_seconds", {{"job_id", id}}), row.step_p50_ms() / 1000);
  EXPECT_DOUBLE_EQ(*e->Value("gantry_job_step_p99_seconds", {{"job_id", id}}), row.step_p99_ms() / 1000);
  EXPECT_EQ(e->Value("gantry_job_allreduce_share", {{"job_id", id}}), row.allreduce_share());
  EXPECT_EQ(e->Value("gantry_job_straggler_flags", {{"job_id", id}}), row.straggler_flags());
  EXPECT_EQ(e->Value("gantry_job_loss_scale", {{"job_id", id}, {"network", "d"}}), 65536);
  EXPECT_EQ(e->Value("gantry_job_skipped_steps", {{"job_id", id}, {"network", "g"}}), 2);
  EXPECT_EQ(e->Value("gantry_job_straggler_events", {{"job_id", id}, {"rank", "1"}}), 2);
  EXPECT_DOUBLE_EQ(*e->Value("gantry_job_progress_ratio", {{"job_id", id}}), 2176.0 / 3840.0);
  // The gRPC calls RunAJob made, counted and timed by the interceptor.
  EXPECT_EQ(e->Value("gantry_rpc_requests_total", {{"method", "SubmitJob"}, {"code", "OK"}}), 1);
  EXPECT_EQ(e->Value("gantry_rpc_requests_total", {{"method", "ReportProgress"}, {"code", "OK"}}), 1);
  EXPECT_EQ(e->Value("gantry_rpc_duration_seconds_count", {{"method", "RegisterGroup"}}), 1);

  // The newest scored epoch's quality, and energy (an estimate here), labelled as such.
  const std::map<std::string, std::string> b32 = {{"job_id", id}, {"batch_size", "32"}};
  EXPECT_EQ(e->Value("gantry_job_quality_frechet_distance", b32), 12.5);
  EXPECT_EQ(e->Value("gantry_job_quality_class_entropy_nats", b32), 0.375);
  EXPECT_EQ(e->Value("gantry_job_quality_marginal_entropy_nats", b32), 2.25);
  EXPECT_EQ(e->Value("gantry_job_quality_confidence", b32), 0.875);
  EXPECT_EQ(e->Value("gantry_job_epoch_energy_joules", {{"job_id", id}, {"batch_size", "32"}, {"source", "estimate"}}),
            250);
  EXPECT_EQ(e->Value("gantry_job_epoch_energy_joules_per_sample", {{"job_id", id}, {"source", "estimate"}}), 0.25);
  EXPECT_EQ(e->Value("gantry_job_epoch_energy_joules", {{"job_id", id}, {"meter", "estimate"}}), 250);
  EXPECT_EQ(e->Value("gantry_job_energy_joules", {{"job_id", id}, {"source", "estimate"}}), 350);
  EXPECT_EQ(e->Find("gantry_job_quality_frechet_distance").size(), 1u);
  EXPECT_TRUE(e->Find("gantry_job_quality_kernel_inception_distance").empty());  // the judge's rows have none

  // A newer epoch that was not scored (and not measured) leaves the newest scored figures
  // in place and ends the epoch energy series, while the job's total stays.
  v1::ReportProgressRequest next;
  v1::EpochMetrics unscored = testing::EpochRow(64, 1, 2);
  unscored.set_quality_fd(-1);
  *next.add_epochs() = unscored;
  ASSERT_TRUE(group_->Report(next, nullptr).ok());
  e = testing::ParsePrometheusText(http_->Get("/metrics", Bearer())->body, &error);
  ASSERT_TRUE(e.has_value()) << error;
  EXPECT_EQ(e->Value("gantry_job_quality_frechet_distance", b32), 12.5);
  EXPECT_TRUE(e->Find("gantry_job_epoch_energy_joules").empty());
  EXPECT_EQ(e->Value("gantry_job_energy_joules", {{"job_id", id}}), 350);

  // An epoch scored by the random features (no judge: confidence -1) has an FD and a KID,
  // here a little below 0 (unbiased).
  v1::ReportProgressRequest label_free;
  v1::EpochMetrics random_features = testing::EpochRow(64, 2, 2);
  random_features.set_quality_fd(20.25);
  random_features.set_quality_class_entropy(-1);
  random_features.set_quality_marginal_entropy(-1);
  random_features.set_quality_confidence(-1);
  random_features.mutable_quality_kid()->set_value(-0.000125);
  *label_free.add_epochs() = random_features;
  ASSERT_TRUE(group_->Report(label_free, nullptr).ok());
  e = testing::ParsePrometheusText(http_->Get("/metrics", Bearer())->body, &error);
  ASSERT_TRUE(e.has_value()) << error;
  const std::map<std::string, std::string> b64 = {{"job_id", id}, {"batch_size", "64"}};
  EXPECT_EQ(e->Value("gantry_job_quality_frechet_distance", b64), 20.25);
  EXPECT_EQ(e->Value("gantry_job_quality_kernel_inception_distance", b64), -0.000125);
  EXPECT_EQ(e->Find("gantry_job_quality_kernel_inception_distance").size(), 1u);

  // Once the job ends its per-job series end too; the state counts move.
  ASSERT_TRUE(group_->Finish(v1::JOB_STATE_SUCCEEDED).ok());
  e = testing::ParsePrometheusText(http_->Get("/metrics", Bearer())->body, &error);
  ASSERT_TRUE(e.has_value()) << error;
  EXPECT_EQ(e->Value("gantry_jobs", {{"state", "succeeded"}}), 1);
  EXPECT_TRUE(e->Find("gantry_job_info").empty());
}

TEST_F(HttpServerTest, ServesTheSampleGridByJobIdAndNoPathFromARequest) {
  const std::string id = RunAJob("grid");
  httplib::Result grid = http_->Get(("/api/jobs/" + id + "/samples.png").c_str(), Bearer());
  ASSERT_TRUE(grid);
  ASSERT_EQ(grid->status, 200);
  EXPECT_EQ(grid->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(grid->body, std::string(kPng) + "the grid");
  EXPECT_EQ(grid->get_header_value("X-Gantry-Sample"), "batch 32 epoch 2");

  // A secret next to the run folder, and requests that try to reach it or /etc/passwd.
  std::ofstream(dir_ + "/runs/secret.txt") << "SECRET";
  const std::string base = "/api/jobs/" + id;
  for (const std::string& target : std::vector<std::string>{base + "/../../../../etc/passwd", base + "/samples.png/../../secret.txt", "/api/jobs/../../etc/passwd",
        "/api/jobs/%2e%2e/%2e%2e/etc/passwd", "/api/jobs/%2e%2e%2f%2e%2e%2fetc%2fpasswd/samples.png",
        "/api/jobs/..%2f..%2fsecret.txt/samples.png", "/api/jobs/" + id + "%2f..%2fsecret.txt",
        "//etc/passwd", "/etc/passwd", "/app.js/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
        "/api/jobs/" + dir_ + "/runs/secret.txt", "/api/jobs/.." + dir_ + "/samples.png",
        "http://localhost/../../etc/passwd", "/api/jobs/job-1%00/samples.png", "/..\\..\\etc\\passwd"}) {
    const std::string response = RawGet(server_->http_port(), target);
    ASSERT_FALSE(response.empty()) << target;
    EXPECT_THAT(response, ::testing::Not(HasSubstr("root:"))) << target;
    EXPECT_THAT(response, ::testing::Not(HasSubstr("SECRET"))) << target;
    const std::string status_line = response.substr(0, response.find('\r'));
    EXPECT_THAT(status_line, ::testing::AnyOf(HasSubstr(" 404 "), HasSubstr(" 400 "))) << target << ": " << status_line;
  }

  // A link planted in the run folder is not followed: the grid is refused, not served.
  fs::remove(run_ + "/samples/b0032/epoch_002.png");
  std::ofstream(dir_ + "/runs/outside.png") << kPng << "SECRET";
  fs::create_symlink(dir_ + "/runs/outside.png", run_ + "/samples/b0032/epoch_002.png");
  httplib::Result linked = http_->Get(("/api/jobs/" + id + "/samples.png").c_str(), Bearer());
  EXPECT_EQ(linked->status, 404);
  EXPECT_THAT(linked->body, ::testing::Not(HasSubstr("SECRET")));
  EXPECT_THAT(linked->body, HasSubstr("symbolic link"));
}

// What a generate job (or `gantry-worker generate --out RUN/generate-<name>`) leaves in the
// run folder: the newest grid is served at /generated.png and named in the job's JSON;
// links and files that are not regular are refused there, not followed or waited on.
TEST_F(HttpServerTest, ServesTheNewestGeneratedGridAndNamesItInTheJobsJson) {
  const std::string id = RunAJob("generated");
  const std::string route = "/api/jobs/" + id + "/generated.png";
  EXPECT_TRUE(GetJson("/api/jobs/" + id)["generated_grid"].is_null());
  EXPECT_EQ(http_->Get(route.c_str(), Bearer())->status, 404);

  fs::create_directories(run_ + "/generate-older");
  std::ofstream(run_ + "/generate-older/grid.png") << kPng << "older samples";
  fs::last_write_time(run_ + "/generate-older", fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::create_directories(run_ + "/generate-job-2");
  std::ofstream(run_ + "/generate-job-2/grid.png") << kPng << "the samples";
  fs::last_write_time(run_ + "/generate-job-2", fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(GetJson("/api/jobs/" + id)["generated_grid"], "generate-job-2");
  httplib::Result grid = http_->Get(route.c_str(), Bearer());
  ASSERT_TRUE(grid);
  ASSERT_EQ(grid->status, 200) << grid->body;
  EXPECT_EQ(grid->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(grid->get_header_value("X-Gantry-Generated"), "generate-job-2");
  EXPECT_EQ(grid->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(grid->body, std::string(kPng) + "the samples");
  EXPECT_EQ(http_->Get(("/api/jobs/" + id + "/generated.png?f=generate-job-2").c_str(), Bearer())->body, grid->body)
      << "the dashboard's cache-busting query changes nothing";
  EXPECT_EQ(http_->Get(route.c_str())->status, 401) << "the token rules hold for the grid too";

  // Newer than both: a grid that is a link to a file outside, then a generate folder that
  // is a link to a folder outside, then a FIFO as the grid. Each is refused (404 naming
  // why), never served, and the JSON names no grid rather than an older one.
  std::ofstream(dir_ + "/runs/outside.png") << kPng << "SECRET";
  fs::create_directories(dir_ + "/runs/outside-folder");
  std::ofstream(dir_ + "/runs/outside-folder/grid.png") << kPng << "SECRET";
  fs::create_directories(run_ + "/generate-link");
  fs::create_symlink(dir_ + "/runs/outside.png", run_ + "/generate-link/grid.png");
  fs::create_directory_symlink(dir_ + "/runs/outside-folder", run_ + "/generate-linked-folder");
  fs::create_directories(run_ + "/generate-fifo");
  ASSERT_EQ(mkfifo((run_ + "/generate-fifo/grid.png").c_str(), 0600), 0);
  for (const char* planted : {"generate-link", "generate-linked-folder", "generate-fifo"}) {
    SCOPED_TRACE(planted);
    for (const char* other : {"generate-link", "generate-linked-folder", "generate-fifo"}) {
      if (std::string(other) != planted) {
        fs::last_write_time(run_ + "/" + other, fs::file_time_type::clock::now() - std::chrono::hours(3));
      }
    }
    fs::last_write_time(fs::canonical(run_ + "/" + planted), fs::file_time_type::clock::now());
    const auto start = std::chrono::steady_clock::now();
    httplib::Result refused = http_->Get(route.c_str(), Bearer());
    ASSERT_TRUE(refused);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3)) << "a FIFO is not waited on";
    EXPECT_EQ(refused->status, 404);
    EXPECT_THAT(refused->body, ::testing::Not(HasSubstr("SECRET")));
    EXPECT_THAT(refused->body, std::string(planted) == "generate-fifo" ? HasSubstr("not a regular file")
                                                                        : HasSubstr("symbolic link"));
    EXPECT_TRUE(GetJson("/api/jobs/" + id)["generated_grid"].is_null());
  }
}

TEST(HttpListen, IsCheckedLikeListen) {
  const std::string dir = testing::MakeTempDir("http_listen");
  fs::create_directories(dir + "/data");
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = dir + "/gantry.db";
  options.data_roots = {dir + "/data"};
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:", "127.0.0.1"}) {
    options.http_listen = bad;
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
    ASSERT_FALSE(server.ok()) << bad;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(server.status().message(), HasSubstr("--http-listen")) << bad;
  }
  // A busy port: UNAVAILABLE naming the flag.
  options.http_listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> first = CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
  ASSERT_TRUE(first.ok()) << first.status();
  options.db_path = dir + "/second.db";
  options.http_listen = absl::StrCat("127.0.0.1:", (*first)->http_port());
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> second =
      CoordinatorServer::Start(options, Clock::Real(), Clock::Real());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("--http-listen"));
}

}  // namespace
}  // namespace gantry
