// A queued job says why no group has taken it (Job.waiting_reason): none registered,
// none of the registered ones fits it (and what it waits for), every fitting one busy,
// or its spec no longer resolving; nothing once an idle group fits it. `gantry status` and `gantry
// jobs` print it.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CoordinatorFixture;

std::string Reason(CoordinatorFixture& f, const std::string& id) {
  absl::StatusOr<v1::Job> job = f.core().GetJob(id);
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? job->waiting_reason() : "";
}

TEST(WaitingReason, SaysWhyAQueuedJobWaits) {
  CoordinatorFixture f("waiting");
  const std::string job = f.Submit({8}, 2, 2);
  EXPECT_THAT(Reason(f, job), HasSubstr("no worker group is registered"));
  f.Register(1);
  EXPECT_THAT(Reason(f, job), HasSubstr("no registered group fits it (group-1: 1 rank(s)): it waits for a group of 2"));
  v1::ListJobsRequest all;
  EXPECT_THAT(f.core().ListJobs(all)->jobs(0).waiting_reason(), HasSubstr("no registered group fits it"));
  const std::string pair = f.Register(2);
  EXPECT_EQ(Reason(f, job), "");  // an idle group fits: it is next
  const std::string second = f.Submit({8}, 2, 2);
  EXPECT_EQ(f.Acquire(pair).job().id(), job);
  EXPECT_THAT(Reason(f, second), HasSubstr("every group that fits it is busy"));
  EXPECT_EQ(Reason(f, job), "");  // running
}

TEST(WaitingReason, GantryStatusAndJobsPrintIt) {
  const testing::Folders s = testing::MakeFolders("waiting_cli");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  testing::FakeWorkerGroup single(coordinator.address(), 1);
  ASSERT_TRUE(single.Register().ok());
  testing::CommandResult r = testing::RunCommand(
      testing::Gantry(coordinator.port(), "submit --dataset mnist --batch-size 8 --world-size 2 --data-dir " + s.data),
      30);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::RunCommand(testing::Gantry(coordinator.port(), "status job-1"), 30);
  EXPECT_THAT(r.output, HasSubstr("waiting      no registered group fits it"));
  r = testing::RunCommand(testing::Gantry(coordinator.port(), "jobs"), 30);
  EXPECT_THAT(r.output, HasSubstr("job-1 waits: no registered group fits it"));
  r = testing::RunCommand(testing::Gantry(coordinator.port(), "--json status job-1"), 30, false);
  EXPECT_THAT(r.output, HasSubstr("\"waiting_reason\":\"no registered group fits it"));
}

}  // namespace
}  // namespace gantry
