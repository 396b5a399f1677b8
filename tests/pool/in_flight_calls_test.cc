// A stop ends the pool's calls to the coordinator within a stated time whatever the
// coordinator does: here one that takes every call and never answers (as a coordinator
// stopped with SIGSTOP does), so every call would otherwise wait for its whole deadline.
#include "worker/pool/in_flight_calls.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/pool/coordinator_client.h"

namespace gantry {
namespace {

// A coordinator that takes every call and never answers, as one stopped with SIGSTOP
// does once the connection is up: each call would wait for its whole deadline.
class StuckCoordinator final : public v1::Coordinator::Service {
 public:
  StuckCoordinator() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~StuckCoordinator() override { server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  grpc::Status RegisterGroup(grpc::ServerContext* c, const v1::RegisterGroupRequest*,
                             v1::RegisterGroupResponse*) override {
    return Hang(c);
  }
  grpc::Status AcquireJob(grpc::ServerContext* c, const v1::AcquireJobRequest*, v1::AcquireJobResponse*) override {
    return Hang(c);
  }
  grpc::Status ReportProgress(grpc::ServerContext* c, const v1::ReportProgressRequest*,
                              v1::ReportProgressResponse*) override {
    return Hang(c);
  }

 private:
  static grpc::Status Hang(grpc::ServerContext* c) {
    while (!c->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return grpc::Status::CANCELLED;
  }
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(InFlightCalls, AStopEndsCallsToACoordinatorThatNeverAnswers) {
  StuckCoordinator server;
  std::atomic<bool> stopping{false};
  CoordinatorClientOptions options;
  options.address = server.address();
  options.call_timeout_seconds = 60;
  options.stopping = [&] { return stopping.load(); };
  options.stop_grace_seconds = 0.5;
  absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> client = GrpcCoordinatorClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();

  // A long poll in flight when the stop comes is cancelled at once.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stopping = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  v1::AcquireJobRequest acquire;
  acquire.set_wait_seconds(100);
  const absl::StatusOr<v1::AcquireJobResponse> acquired = (*client)->AcquireJob(acquire);
  stopper.join();
  EXPECT_TRUE(absl::IsCancelled(acquired.status())) << acquired.status();
  EXPECT_LT(SecondsSince(t0), 2.0);

  // Registering is not even tried once stopping.
  t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(absl::IsCancelled((*client)->RegisterGroup({}).status()));
  EXPECT_LT(SecondsSince(t0), 0.2);

  // A delivery (a report) may go on for the grace period and a second, then it ends.
  t0 = std::chrono::steady_clock::now();
  const absl::Status reported = (*client)->ReportProgress({}).status();
  EXPECT_FALSE(reported.ok());
  EXPECT_LT(SecondsSince(t0), 0.5 + 1 + 1.0) << reported;
}

TEST(InFlightCalls, WithoutAStopCallsKeepTheirDeadlines) {
  StuckCoordinator server;
  CoordinatorClientOptions options;
  options.address = server.address();
  options.call_timeout_seconds = 0.5;
  options.stopping = [] { return false; };
  absl::StatusOr<std::unique_ptr<GrpcCoordinatorClient>> client = GrpcCoordinatorClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  const auto t0 = std::chrono::steady_clock::now();
  const absl::Status s = (*client)->RegisterGroup({}).status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_GE(SecondsSince(t0), 0.4);
}

}  // namespace
}  // namespace gantry
