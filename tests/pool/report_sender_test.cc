// The report thread against a scripted coordinator. Backoff delays are milliseconds, and
// every wait is bounded by a generous timeout that only a hang would reach.
#include "worker/pool/report_sender.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/pool/fake_coordinator_api.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kGenerous = 30;  // seconds; reached only if something hangs

ReportSenderOptions QuickOptions() {
  return ReportSenderOptions{.interval_seconds = 0.05,
                             .backoff = BackoffPolicy{.initial_seconds = 0.001, .max_seconds = 0.01, .jitter = 0}};
}

v1::EpochMetrics SentRow(int64_t epoch) {
  v1::EpochMetrics row;
  row.set_batch_size(64);
  row.set_epoch(epoch);
  return row;
}

std::vector<int64_t> AcceptedEpochs(testing::FakeCoordinatorApi& api) {
  std::vector<int64_t> epochs;
  for (const v1::ReportProgressRequest& r : api.accepted_reports()) {
    for (const v1::EpochMetrics& row : r.epochs()) epochs.push_back(row.epoch());
  }
  return epochs;
}

TEST(ReportSender, KeepsRowsThroughAnOutageAndDeliversEachOnce) {
  testing::FakeCoordinatorApi api;
  api.FailReports({absl::UnavailableError("connection refused"), absl::UnavailableError("connection refused"),
                   absl::DeadlineExceededError("deadline")});
  ReportBuffer buffer;
  JobControl job("job-7", 2);
  ReportSender sender(api, "group-3", buffer, job, QuickOptions());
  buffer.AddEpochRow(SentRow(1), {});
  buffer.AddEpochRow(SentRow(2), {});
  sender.Wake();
  ASSERT_TRUE(sender.WaitDrained(kGenerous));
  buffer.AddEpochRow(SentRow(3), {});
  buffer.SetFinal(v1::JOB_STATE_SUCCEEDED);
  sender.Wake();
  ASSERT_TRUE(sender.WaitDrained(kGenerous));
  EXPECT_THAT(AcceptedEpochs(api), ElementsAre(1, 2, 3));
  EXPECT_GE(api.reports().size(), 5u) << "three failed attempts, then the two accepted";
  const std::vector<v1::ReportProgressRequest> accepted = api.accepted_reports();
  EXPECT_EQ(accepted.back().final_state(), v1::JOB_STATE_SUCCEEDED);
  for (const v1::ReportProgressRequest& r : api.reports()) {
    EXPECT_EQ(r.group_id(), "group-3");
    EXPECT_EQ(r.job_id(), "job-7");
    EXPECT_EQ(r.attempt(), 2);
  }
  EXPECT_FALSE(job.gone());
}

TEST(ReportSender, AJobTheCoordinatorNoLongerHasIsDropped) {
  testing::FakeCoordinatorApi api;
  api.FailReports({absl::AbortedError("job job-7 attempt 1 is no longer held by group-3")});
  ReportBuffer buffer;
  JobControl job("job-7", 1);
  ReportSender sender(api, "group-3", buffer, job, QuickOptions());
  buffer.AddEpochRow(SentRow(1), {});
  sender.Wake();
  EXPECT_FALSE(sender.WaitDrained(kGenerous));
  EXPECT_TRUE(job.gone());
  EXPECT_THAT(job.gone_reason(), HasSubstr("no longer held"));
  EXPECT_TRUE(api.accepted_reports().empty());
}

TEST(ReportSender, AnUnknownJobIsDroppedToo) {
  testing::FakeCoordinatorApi api;
  api.FailReports({absl::NotFoundError("no job 'job-7'")});
  ReportBuffer buffer;
  JobControl job("job-7", 1);
  ReportSender sender(api, "group-3", buffer, job, QuickOptions());
  buffer.SetFinal(v1::JOB_STATE_SUCCEEDED);
  sender.Wake();
  EXPECT_FALSE(sender.WaitDrained(kGenerous));
  EXPECT_TRUE(job.gone());
}

TEST(ReportSender, RepliesBringCancelAndTheNextPlan) {
  testing::FakeCoordinatorApi api;
  v1::ReportProgressResponse reply;
  reply.set_cancel(true);
  v1::ShardPlan* plan = reply.mutable_next_plan();
  plan->set_batch_size(64);
  plan->set_epoch(2);
  plan->add_shares(20);
  plan->add_shares(44);
  api.SetReportReply(reply);
  ReportBuffer buffer;
  JobControl job("job-1", 1);
  ReportSender sender(api, "group-1", buffer, job, QuickOptions());
  buffer.AddEpochRow(SentRow(1), {});
  sender.Wake();
  ASSERT_TRUE(sender.WaitDrained(kGenerous));
  EXPECT_TRUE(job.cancel_requested());
  EXPECT_THAT(job.WaitForPlan(64, 2, 0), ::testing::Optional(ElementsAre(20, 44)));
  EXPECT_EQ(job.WaitForPlan(64, 3, 0), std::nullopt);
}

TEST(ReportSender, AReportTheCoordinatorRefusesIsDroppedNotRetried) {
  testing::FakeCoordinatorApi api;
  api.FailReports({absl::InvalidArgumentError("epochs[0].epoch: 9 is not in [1, 2]")});
  ReportBuffer buffer;
  JobControl job("job-1", 1);
  ReportSender sender(api, "group-1", buffer, job, QuickOptions());
  buffer.AddEpochRow(SentRow(9), {});
  sender.Wake();
  EXPECT_TRUE(sender.WaitDrained(kGenerous));
  EXPECT_EQ(api.reports().size(), 1u);
  EXPECT_FALSE(job.gone());
}

TEST(JobControl, APlanWaitEndsAtOnceWhileTheCoordinatorIsAway) {
  JobControl job("job-1", 1);
  job.SetReachable(false);
  EXPECT_EQ(job.WaitForPlan(64, 2, kGenerous), std::nullopt);
  v1::ShardPlan plan;
  plan.set_batch_size(64);
  plan.set_epoch(2);
  plan.add_shares(64);
  job.AddPlan(plan);
  EXPECT_THAT(job.WaitForPlan(64, 2, kGenerous), ::testing::Optional(ElementsAre(64)));
}

TEST(JobControl, APlanWaitEndsAtOnceForACancelledOrGoneJob) {
  JobControl cancelled("job-1", 1), gone("job-2", 1);
  cancelled.RequestCancel();
  gone.MarkGone("requeued");
  gone.MarkGone("second reason is ignored");
  EXPECT_EQ(cancelled.WaitForPlan(64, 1, kGenerous), std::nullopt);
  EXPECT_EQ(gone.WaitForPlan(64, 1, kGenerous), std::nullopt);
  EXPECT_EQ(gone.gone_reason(), "requeued");
}

}  // namespace
}  // namespace gantry
