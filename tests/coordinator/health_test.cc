// The standard gRPC health service on a real CoordinatorServer started with a token:
// it answers without the token (Kubernetes' grpc probe sends none) while the Coordinator
// service still refuses such callers, knows "" and the Coordinator's full name, refuses
// other names as the protocol says, and turns NOT_SERVING when the server stops.
#include <grpcpp/grpcpp.h>
#include <thread>

#include "coordinator/app/server.h"
#include "gantry/v1/coordinator.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

class HealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
        testing::StartServerWithToken("health", "0123456789abcdef0123456789abcdef");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials());
    health_ = Health::NewStub(channel_);
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  // Check(service) without any token: the call's status, and the answer in `status`.
  grpc::Status Check(const std::string& service, HealthCheckResponse::ServingStatus* status) {
    HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    grpc::Status call = health_->Check(Context().get(), request, &response);
    *status = response.status();
    return call;
  }

  std::unique_ptr<CoordinatorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<Health::Stub> health_;
};

TEST_F(HealthTest, ServesTheServerAndTheCoordinatorWithoutAToken) {
  for (const std::string service : {"", kCoordinatorHealthName}) {
    HealthCheckResponse::ServingStatus status = HealthCheckResponse::UNKNOWN;
    grpc::Status call = Check(service, &status);
    ASSERT_TRUE(call.ok()) << "service '" << service << "': " << call.error_message();
    EXPECT_EQ(status, HealthCheckResponse::SERVING) << "service '" << service << "'";
  }
  // The same tokenless caller is still refused by the Coordinator itself.
  v1::ListJobsResponse jobs;
  EXPECT_EQ(v1::Coordinator::NewStub(channel_)->ListJobs(Context().get(), {}, &jobs).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(HealthTest, AnUnknownServiceIsNotFound) {
  HealthCheckResponse::ServingStatus status = HealthCheckResponse::UNKNOWN;
  EXPECT_EQ(Check("gantry.v1.NoSuchService", &status).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthTest, AWatcherSeesNotServingWhenTheServerStops) {
  HealthCheckRequest request;
  request.set_service(kCoordinatorHealthName);
  auto context = Context();
  std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> watch = health_->Watch(context.get(), request);
  HealthCheckResponse response;
  ASSERT_TRUE(watch->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);

  // Shutdown waits (up to its grace period) for this open watch, so it runs aside.
  std::thread stopper([this] { server_->Shutdown(); });
  const bool got_update = watch->Read(&response);
  stopper.join();
  ASSERT_TRUE(got_update) << "the watch ended without reporting the stop";
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace gantry
