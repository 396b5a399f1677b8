// The gRPC layer in-process: every method refuses a caller without the token, and
// accepts one with it.
#include "coordinator/service/grpc_service.h"

#include <functional>
#include <grpcpp/grpcpp.h>

#include "coordinator/app/server.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<CoordinatorServer>> server = testing::StartServerWithToken("grpc_auth", kToken);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::Coordinator::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                                         grpc::InsecureChannelCredentials()));
  }

  // The status codes of every method, called with `authorization` (none when empty).
  std::vector<grpc::StatusCode> CallEveryMethod(const std::string& authorization) {
    auto context = [&] {
      auto c = std::make_unique<grpc::ClientContext>();
      c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      if (!authorization.empty()) c->AddMetadata("authorization", authorization);
      return c;
    };
    v1::Job job;
    v1::ListJobsResponse jobs;
    v1::JobReport report;
    v1::ListGroupsResponse groups;
    v1::RegisterGroupResponse registered;
    v1::AcquireJobResponse acquired;
    v1::ReportProgressResponse reported;
    v1::HeartbeatResponse beat;
    std::vector<grpc::StatusCode> codes = {
        stub_->SubmitJob(context().get(), {}, &job).error_code(),
        stub_->GetJob(context().get(), {}, &job).error_code(),
        stub_->ListJobs(context().get(), {}, &jobs).error_code(),
        stub_->CancelJob(context().get(), {}, &job).error_code(),
        stub_->GetJobReport(context().get(), {}, &report).error_code(),
        stub_->ListGroups(context().get(), {}, &groups).error_code(),
        stub_->RegisterGroup(context().get(), {}, &registered).error_code(),
        stub_->AcquireJob(context().get(), {}, &acquired).error_code(),
        stub_->ReportProgress(context().get(), {}, &reported).error_code(),
        stub_->Heartbeat(context().get(), {}, &beat).error_code(),
    };
    auto watch_context = context();
    v1::JobEvent event;
    auto reader = stub_->WatchJob(watch_context.get(), {});
    while (reader->Read(&event)) {
    }
    codes.push_back(reader->Finish().error_code());
    return codes;
  }

  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(AuthTest, EveryMethodRefusesCallersWithoutTheToken) {
  for (const std::string& authorization : {std::string(), std::string("Bearer wrong"), std::string(kToken)}) {
    for (grpc::StatusCode code : CallEveryMethod(authorization)) {
      EXPECT_EQ(code, grpc::StatusCode::UNAUTHENTICATED) << "authorization '" << authorization << "'";
    }
  }
}

TEST_F(AuthTest, EveryMethodServesCallersWithTheToken) {
  // With the token, each call gets past authentication: empty requests are then
  // refused or answered on their merits, never as UNAUTHENTICATED.
  const std::vector<grpc::StatusCode> codes = CallEveryMethod(std::string("Bearer ") + kToken);
  EXPECT_EQ(codes.size(), 11u);
  for (grpc::StatusCode code : codes) EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(codes[2], grpc::StatusCode::OK);  // ListJobs
}

}  // namespace
}  // namespace gantry
