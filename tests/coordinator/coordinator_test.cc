// The Coordinator's job lifecycle with fake clocks: scheduling, reports and plans,
// cancellation, leases, retries and recovery from its store.
#include "coordinator/jobs/coordinator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CoordinatorFixture;
using testing::Report;

std::vector<v1::JobState> StateHistory(Coordinator& core, const std::string& job_id) {
  std::vector<v1::JobState> states;
  const absl::StatusOr<std::vector<v1::JobEvent>> events = core.EventsAfter(job_id, 0, 100);
  for (const v1::JobEvent& e : *events) {
    if (e.has_state()) states.push_back(e.state().state());
  }
  return states;
}

TEST(Coordinator, AJobRunsToTheEndOnAGroup) {
  CoordinatorFixture f("lifecycle");
  const std::string job_id = f.Submit({8, 16}, 2, 2);
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  ASSERT_EQ(acquired.job().id(), job_id);
  EXPECT_EQ(acquired.job().attempts(), 1);
  EXPECT_EQ(acquired.plan().batch_size(), 8);
  EXPECT_EQ(acquired.plan().shares_size(), 2);

  // Epoch by epoch, each reply carries the plan of the next epoch.
  const std::vector<std::pair<int64_t, int64_t>> epochs = {{8, 1}, {8, 2}, {16, 1}, {16, 2}};
  for (size_t i = 0; i < epochs.size(); ++i) {
    v1::ReportProgressRequest report = Report(group, acquired);
    *report.add_epochs() = testing::EpochRow(epochs[i].first, epochs[i].second, 2);
    absl::StatusOr<v1::ReportProgressResponse> reply = f.core().ReportProgress(report);
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_FALSE(reply->cancel());
    if (i + 1 < epochs.size()) {
      EXPECT_EQ(reply->next_plan().batch_size(), epochs[i + 1].first);
      EXPECT_EQ(reply->next_plan().epoch(), epochs[i + 1].second);
    } else {
      EXPECT_FALSE(reply->has_next_plan());
    }
  }
  v1::ReportProgressRequest done = Report(group, acquired);
  done.set_final_state(v1::JOB_STATE_SUCCEEDED);
  ASSERT_TRUE(f.core().ReportProgress(done).ok());

  absl::StatusOr<v1::JobReport> report = f.core().GetJobReport(job_id);
  EXPECT_EQ(report->job().state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(report->job().epochs_reported(), 4);
  ASSERT_EQ(report->epochs_size(), 4);
  EXPECT_EQ(report->epochs(2).seconds(), testing::EpochRow(16, 1, 2).seconds());
  EXPECT_EQ(StateHistory(f.core(), job_id),
            (std::vector<v1::JobState>{v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED}));
  EXPECT_EQ(f.core().ListGroups().groups(0).state(), v1::GROUP_STATE_IDLE);
}

TEST(Coordinator, AcquireWithoutWorkReturnsEmptyAndAskingAgainReturnsTheSameJob) {
  CoordinatorFixture f("acquire");
  const std::string group = f.Register(2);
  EXPECT_FALSE(f.Acquire(group).has_job());
  const std::string job_id = f.Submit();
  EXPECT_EQ(f.Acquire(group).job().id(), job_id);
  const v1::AcquireJobResponse again = f.Acquire(group);  // the first reply was "lost"
  EXPECT_EQ(again.job().id(), job_id);
  EXPECT_EQ(again.job().attempts(), 1);
  v1::AcquireJobRequest unknown;
  unknown.set_group_id("group-99");
  EXPECT_TRUE(absl::IsNotFound(f.core().AcquireJob(unknown).status()));
}

TEST(Coordinator, JobsGoToGroupsOfTheirSize) {
  CoordinatorFixture f("sizes");
  const std::string four = f.Submit({8}, 1, 4);
  const std::string two = f.Submit({8}, 1, 2);
  const std::string group2 = f.Register(2);
  EXPECT_EQ(f.Acquire(group2).job().id(), two);
  const std::string group4 = f.Register(4);
  EXPECT_EQ(f.Acquire(group4).job().id(), four);
}

TEST(Coordinator, AGpuJobGoesOnlyToAGroupWhoseRanksAllHaveAGpu) {
  CoordinatorFixture f("gpus");
  v1::SubmitJobRequest request = testing::SweepRequest(f.data_dir(), {8}, 1, 2);
  request.mutable_spec()->set_device("cuda");
  absl::StatusOr<v1::Job> gpu_job = f.core().SubmitJob(request);
  ASSERT_TRUE(gpu_job.ok()) << gpu_job.status() << " (the coordinator itself needs no GPU)";
  const std::string cpu_job = f.Submit({8}, 1, 2);
  auto register_with = [&](std::vector<std::string> devices) {
    v1::RegisterGroupRequest g;
    g.set_world_size(2);
    for (const std::string& d : devices) {
      g.add_hosts("localhost");
      g.add_devices(d);
    }
    absl::StatusOr<v1::RegisterGroupResponse> r = f.core().RegisterGroup(g);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->group_id() : "";
  };
  const std::string half = register_with({"cuda:0 NVIDIA H100 80GB HBM3", "cpu"});
  EXPECT_EQ(f.Acquire(half).job().id(), cpu_job) << "the GPU job waits, the CPU job behind it runs";
  const std::string gpus = register_with({"cuda:0 NVIDIA H100 80GB HBM3", "cuda:1 NVIDIA H100 80GB HBM3"});
  EXPECT_EQ(f.Acquire(gpus).job().id(), gpu_job->id());
}

std::string FirstMessage(Coordinator& core, const std::string& job_id) {
  const absl::StatusOr<std::vector<v1::JobEvent>> events = core.EventsAfter(job_id, 0, 1);
  return events.ok() && !events->empty() ? events->front().state().message() : "";
}

TEST(Coordinator, AnAnySizeJobWaitsForAGroupWhoseRanksEachGetEnoughRows) {
  CoordinatorFixture f("min-share");
  const std::string two = f.Register(2);
  // Batch 3 without --sync-bn on 2 ranks gives a rank 1 row; DCGAN's BatchNorm needs 2.
  const std::string small = f.Submit({3, 8}, 1, 0);
  EXPECT_THAT(FirstMessage(f.core(), small),
              ::testing::AllOf(HasSubstr("no registered group fits it (group-1: 2 rank(s))"),
                    HasSubstr("waits for a group of at most 1 rank(s)"), HasSubstr("--sync-bn")));
  EXPECT_FALSE(f.Acquire(two).has_job()) << "the 2-rank group would fail it";
  // With --sync-bn the same batch fits 2 ranks: submitted plainly, and handed out.
  v1::SubmitJobRequest synced = testing::SweepRequest(f.data_dir(), {3, 8}, 1, 0);
  synced.mutable_spec()->mutable_sync_bn()->set_value(true);
  const absl::StatusOr<v1::Job> synced_job = f.core().SubmitJob(synced);
  ASSERT_TRUE(synced_job.ok()) << synced_job.status();
  EXPECT_EQ(FirstMessage(f.core(), synced_job->id()), "submitted");
  EXPECT_EQ(f.Acquire(two).job().id(), synced_job->id());
  const std::string one = f.Register(1);
  const v1::AcquireJobResponse acquired = f.Acquire(one);
  EXPECT_EQ(acquired.job().id(), small);
  EXPECT_THAT(acquired.plan().shares(), ::testing::ElementsAre(3));
}

TEST(Coordinator, RegistrationRefusesUnprintableNamesByField) {
  CoordinatorFixture f("printable-groups");
  auto request = [](const std::string& name, std::vector<std::string> hosts, std::vector<std::string> devices) {
    v1::RegisterGroupRequest g;
    g.set_world_size(2);
    g.set_name(name);
    for (const std::string& h : hosts) g.add_hosts(h);
    for (const std::string& d : devices) g.add_devices(d);
    return g;
  };
  const struct {
    v1::RegisterGroupRequest request;
    std::string field, byte;
  } refused[] = {
      {request("pool\x1b[2J", {}, {}), "name: ", "byte 0x1b at position 4"},
      {request("pool", {"node-1", "node-2\n"}, {}), "hosts[1]: ", "byte 0x0a at position 6"},
      {request("pool", {"node-1"}, {"cuda:0 \xff"}), "devices[0]: ", "byte 0xff at position 7"},
      {request("pool", {"node-\xc2\x9b" "1"}, {}), "hosts[0]: ", "byte 0xc2 at position 5"},  // a C1 CSI
  };
  for (const auto& c : refused) {
    const absl::StatusOr<v1::RegisterGroupResponse> r = f.core().RegisterGroup(c.request);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    EXPECT_THAT(std::string(r.status().message()), ::testing::AllOf(::testing::StartsWith(c.field), HasSubstr(c.byte),
                                                       HasSubstr("one line of printable text")));
  }
  EXPECT_EQ(f.core().ListGroups().groups_size(), 0) << "nothing refused was registered";
  const absl::StatusOr<v1::RegisterGroupResponse> accepted =
      f.core().RegisterGroup(request("entraînement ✓", {"nœud-1", "nœud-2"}, {"cuda:0 NVIDIA H100 80GB HBM3", "cpu"}));
  EXPECT_TRUE(accepted.ok()) << accepted.status() << " (printable UTF-8 is a name)";
}

TEST(Coordinator, CancellingAQueuedJobEndsIt) {
  CoordinatorFixture f("cancel_queued");
  const std::string job_id = f.Submit();
  EXPECT_EQ(f.core().CancelJob(job_id)->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_FALSE(f.Acquire(f.Register(2)).has_job());
  absl::StatusOr<v1::Job> again = f.core().CancelJob(job_id);
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status()));
  EXPECT_TRUE(absl::IsNotFound(f.core().CancelJob("job-42").status()));
}

TEST(Coordinator, CancellingARunningJobTellsItsGroup) {
  CoordinatorFixture f("cancel_running");
  const std::string job_id = f.Submit();
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  EXPECT_EQ(f.core().CancelJob(job_id)->state(), v1::JOB_STATE_CANCELLING);
  v1::HeartbeatRequest beat;
  beat.set_group_id(group);
  EXPECT_TRUE(f.core().Heartbeat(beat)->cancel());
  v1::ReportProgressRequest report = Report(group, acquired);
  report.mutable_progress()->set_step(3);
  EXPECT_TRUE(f.core().ReportProgress(report)->cancel());
  report.set_final_state(v1::JOB_STATE_CANCELLED);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());
  EXPECT_EQ(f.core().GetJob(job_id)->state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(f.core().GetJob(job_id)->progress().step(), 3);
}

TEST(Coordinator, AGroupThatStopsHeartbeatingLosesItsJob) {
  CoordinatorOptions options;
  options.lease_seconds = 10;
  CoordinatorFixture f("lease", options);
  const std::string job_id = f.Submit();
  const std::string first = f.Register(2);
  const std::string second = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(first);
  ASSERT_EQ(acquired.job().id(), job_id);

  v1::HeartbeatRequest beat;
  beat.set_group_id(second);
  f.clock().AdvanceMillis(9000);
  ASSERT_TRUE(f.core().Heartbeat(beat).ok());
  EXPECT_EQ(f.core().ExpireLeases(), 0);  // 9 s: within the lease
  f.clock().AdvanceMillis(1500);
  ASSERT_TRUE(f.core().Heartbeat(beat).ok());
  EXPECT_EQ(f.core().ExpireLeases(), 1);  // 10.5 s without a word from the first group

  absl::StatusOr<v1::Job> job = f.core().GetJob(job_id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(job->attempts(), 1);
  EXPECT_EQ(f.core().ListGroups().groups(0).state(), v1::GROUP_STATE_LOST);
  const v1::AcquireJobResponse retaken = f.Acquire(second);
  EXPECT_EQ(retaken.job().id(), job_id);
  EXPECT_EQ(retaken.job().attempts(), 2);

  // The lost group comes back: its reports are refused, and it holds nothing.
  absl::StatusOr<v1::ReportProgressResponse> stale = f.core().ReportProgress(Report(first, acquired));
  EXPECT_TRUE(absl::IsAborted(stale.status()));
  EXPECT_THAT(std::string(stale.status().message()), HasSubstr("no longer held by " + first));
  beat.set_group_id(first);
  EXPECT_EQ(f.core().Heartbeat(beat)->job_id(), "");
  EXPECT_EQ(f.core().ListGroups().groups(0).state(), v1::GROUP_STATE_IDLE);
}

TEST(Coordinator, ARequeuedJobKeepsItsCheckpointAndItsPlanStartsThere) {
  CoordinatorOptions options;
  options.lease_seconds = 10;
  CoordinatorFixture f("resume", options);
  const std::string job_id = f.Submit({8, 16}, 2);
  const std::string first = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(first);
  EXPECT_EQ(acquired.plan().batch_size(), 8);
  EXPECT_EQ(acquired.plan().epoch(), 1);
  v1::ReportProgressRequest report = Report(first, acquired);
  v1::CheckpointRef* checkpoint = report.mutable_checkpoint();
  checkpoint->set_host("node-a");
  checkpoint->set_run_folder("/runs/" + job_id);
  checkpoint->set_run_step(12);
  checkpoint->set_batch_size(8);
  checkpoint->set_epoch(3);  // past the last epoch of batch 8: batch 16 comes next
  checkpoint->set_unix_ms(1234);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());
  EXPECT_EQ(f.core().GetJob(job_id)->checkpoint().run_step(), 12);

  f.clock().AdvanceMillis(10500);
  EXPECT_EQ(f.core().ExpireLeases(), 1);
  const v1::AcquireJobResponse retaken = f.Acquire(f.Register(2));
  ASSERT_EQ(retaken.job().id(), job_id);
  EXPECT_EQ(retaken.job().attempts(), 2);
  EXPECT_EQ(retaken.job().checkpoint().run_folder(), "/runs/" + job_id);
  EXPECT_EQ(retaken.job().checkpoint().run_step(), 12);
  EXPECT_EQ(retaken.plan().batch_size(), 16);
  EXPECT_EQ(retaken.plan().epoch(), 1);
  EXPECT_EQ(retaken.plan().shares_size(), 2);

  v1::ReportProgressRequest oversized = Report(f.core().ListGroups().groups(1).id(), retaken);
  oversized.mutable_checkpoint()->set_run_folder(std::string(RequestBounds::kMaxStringChars + 1, 'x'));
  absl::StatusOr<v1::ReportProgressResponse> refused = f.core().ReportProgress(oversized);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("checkpoint.run_folder"));
}

TEST(Coordinator, AReleasedJobIsRequeuedAtOnceWithItsCheckpoint) {
  CoordinatorFixture f("release");
  const std::string id = f.Submit({8}, 2, 2);
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  ASSERT_EQ(acquired.job().id(), id);
  v1::ReportProgressRequest release;
  release.set_group_id(group);
  release.set_job_id(id);
  release.set_attempt(acquired.job().attempts());
  release.mutable_checkpoint()->set_run_folder("/runs/" + id);
  release.mutable_checkpoint()->set_run_step(1);
  release.mutable_checkpoint()->set_batch_size(8);
  release.mutable_checkpoint()->set_epoch(2);
  release.set_final_state(v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(f.core().ReportProgress(release).ok());
  absl::StatusOr<v1::Job> job = f.core().GetJob(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED) << "no lease had to run out";
  EXPECT_TRUE(job->group_id().empty());
  EXPECT_EQ(job->checkpoint().run_step(), 1);
  const v1::AcquireJobResponse again = f.Acquire(f.Register(2));
  EXPECT_EQ(again.job().id(), id);
  EXPECT_EQ(again.job().attempts(), 2);
  EXPECT_EQ(again.plan().epoch(), 2) << "the next attempt starts from the checkpoint";
  // QUEUED is the only non-terminal final state: it means "released".
  v1::ReportProgressRequest other = release;
  other.set_final_state(v1::JOB_STATE_RUNNING);
  EXPECT_EQ(f.core().ReportProgress(other).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Coordinator, AJobFailsAfterLosingItsGroupMaxAttemptsTimes) {
  CoordinatorOptions options;
  options.lease_seconds = 5;
  options.default_max_attempts = 2;
  CoordinatorFixture f("attempts", options);
  const std::string job_id = f.Submit();
  for (int attempt = 1; attempt <= 2; ++attempt) {
    EXPECT_EQ(f.Acquire(f.Register(2)).job().attempts(), attempt);
    f.clock().AdvanceMillis(6000);
    EXPECT_EQ(f.core().ExpireLeases(), 1);
  }
  absl::StatusOr<v1::Job> job = f.core().GetJob(job_id);
  EXPECT_EQ(job->state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(job->error(), HasSubstr("lost its worker group on all 2 attempts"));
}

TEST(Coordinator, ReportsAreCheckedAndIdempotent) {
  CoordinatorFixture f("reports");
  const std::string job_id = f.Submit({8}, 2, 2);
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  v1::ReportProgressRequest bad = Report(group, acquired);
  *bad.add_epochs() = testing::EpochRow(32, 1, 2);
  absl::StatusOr<v1::ReportProgressResponse> refused = f.core().ReportProgress(bad);
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("epochs[0].batch_size"));

  v1::ReportProgressRequest report = Report(group, acquired);
  *report.add_epochs() = testing::EpochRow(8, 1, 2);
  v1::StragglerEvent* straggler = report.add_stragglers();
  straggler->set_batch_size(8);
  straggler->set_epoch(1);
  straggler->set_step(20);
  straggler->set_rank(1);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());
  ASSERT_TRUE(f.core().ReportProgress(report).ok());  // resent after a lost reply
  absl::StatusOr<v1::JobReport> stored = f.core().GetJobReport(job_id);
  EXPECT_EQ(stored->epochs_size(), 1);
  EXPECT_EQ(stored->stragglers_size(), 1);
  EXPECT_EQ(f.core().EventsAfter(job_id, 0, 100)->size(), 4u);  // queued, running, epoch, straggler
}

TEST(Coordinator, ListJobsPagesAndFilters) {
  CoordinatorFixture f("list");
  for (int i = 0; i < 5; ++i) f.Submit();
  ASSERT_TRUE(f.core().CancelJob("job-2").ok());
  v1::ListJobsRequest request;
  request.set_page_size(2);
  std::vector<std::string> ids;
  for (int page = 0; page < 5; ++page) {
    absl::StatusOr<v1::ListJobsResponse> response = f.core().ListJobs(request);
    ASSERT_TRUE(response.ok());
    for (const v1::Job& job : response->jobs()) ids.push_back(job.id());
    if (response->next_page_token().empty()) break;
    request.set_page_token(response->next_page_token());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"job-1", "job-2", "job-3", "job-4", "job-5"}));
  v1::ListJobsRequest cancelled;
  cancelled.set_state(v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(f.core().ListJobs(cancelled)->jobs(0).id(), "job-2");
  v1::ListJobsRequest bad;
  bad.set_page_token("xyz");
  EXPECT_THAT(std::string(f.core().ListJobs(bad).status().message()), HasSubstr("page_token"));
}

TEST(Coordinator, ARestartedCoordinatorKeepsJobsGroupsAndHistory) {
  CoordinatorOptions options;
  options.lease_seconds = 10;
  CoordinatorFixture f("restart", options);
  const std::string running = f.Submit({8}, 2, 2);
  const std::string queued = f.Submit({8}, 2, 2);
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  v1::ReportProgressRequest report = Report(group, acquired);
  *report.add_epochs() = testing::EpochRow(8, 1, 2);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());

  f.clock().AdvanceMillis(8000);
  f.Reopen();
  // The group keeps its job and gets a fresh lease: the restart was not its fault.
  f.clock().AdvanceMillis(8000);
  EXPECT_EQ(f.core().ExpireLeases(), 0);
  EXPECT_EQ(f.core().GetJob(queued)->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(f.core().GetJob(running)->group_id(), group);
  EXPECT_EQ(f.core().GetJobReport(running)->epochs_size(), 1);
  EXPECT_EQ(StateHistory(f.core(), running), (std::vector<v1::JobState>{v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING}));
  // It carries on: the next epoch's report is taken and the job finishes.
  report = Report(group, acquired);
  *report.add_epochs() = testing::EpochRow(8, 2, 2);
  report.set_final_state(v1::JOB_STATE_SUCCEEDED);
  ASSERT_TRUE(f.core().ReportProgress(report).ok());
  EXPECT_EQ(f.core().GetJobReport(running)->epochs_size(), 2);
  EXPECT_EQ(f.Acquire(group).job().id(), queued);
  EXPECT_EQ(f.Submit(), "job-3");
}

}  // namespace
}  // namespace gantry
