#include "worker/pool/heartbeat_thread.h"

#include <chrono>
#include <functional>
#include <thread>

#include "gtest/gtest.h"
#include "tests/pool/fake_coordinator_api.h"

namespace gantry {
namespace {

// Polls `done` every 5 ms for up to 30 s (reached only if something hangs).
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST(HeartbeatThread, PassesACancelOfTheRunningJobOn) {
  testing::FakeCoordinatorApi api;
  v1::HeartbeatResponse reply;
  reply.set_lease_seconds(0.15);  // a beat every 50 ms
  reply.set_job_id("job-4");
  reply.set_cancel(true);
  api.SetHeartbeatReply(reply);
  auto other = std::make_shared<JobControl>("job-3", 1);
  auto running = std::make_shared<JobControl>("job-4", 1);
  HeartbeatThread heartbeat(api, "group-1", 0.15);
  heartbeat.SetJob(other);
  ASSERT_TRUE(Eventually([&] { return heartbeat.beats() >= 2; }));
  EXPECT_FALSE(other->cancel_requested()) << "a cancel names its job";
  heartbeat.SetJob(running);
  EXPECT_TRUE(Eventually([&] { return running->cancel_requested(); }));
}

TEST(HeartbeatThread, KeepsBeatingThroughFailuresAndNoticesAnUnknownGroup) {
  testing::FakeCoordinatorApi api;
  v1::HeartbeatResponse reply;
  reply.set_lease_seconds(0.15);
  api.SetHeartbeatReply(reply);
  api.FailHeartbeats({absl::UnavailableError("down"), absl::UnavailableError("down"),
                      absl::NotFoundError("no group 'group-1'; register the group again")});
  HeartbeatThread heartbeat(api, "group-1", 0.15);
  ASSERT_TRUE(Eventually([&] { return heartbeat.group_unknown(); }));
  heartbeat.SetGroup("group-2");
  EXPECT_FALSE(heartbeat.group_unknown());
  EXPECT_TRUE(Eventually([&] { return api.heartbeats() >= 1; }));
}

}  // namespace
}  // namespace gantry
