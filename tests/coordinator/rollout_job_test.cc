// Rollout jobs at the coordinator (SubmitJobRequest.rollout): checked against their
// source job at submission, queued with its spec and checkpoint, run by any group
// without a shard plan, and kept across a restart.
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "coordinator/jobs/job_outlook.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

class RolloutJobTest : public ::testing::Test {
 protected:
  RolloutJobTest() : f_("rollout_job") {
    flow_dir_ = f_.root() + "/flow";
    case_dir_ = flow_dir_ + "/case-2";
    std::filesystem::create_directories(case_dir_);
    std::ofstream(case_dir_ + "/flow.json") << "{}\n";
  }

  // A queued --model pix2pix --dataset flow run of 32 px images.
  std::string SubmitPix2pix() {
    v1::SubmitJobRequest request;
    request.mutable_spec()->set_model("pix2pix");
    request.mutable_spec()->set_dataset("flow");
    request.mutable_spec()->set_data_dir(flow_dir_);
    request.mutable_spec()->add_batch_sizes(8);
    request.mutable_spec()->mutable_image_size()->set_value(32);
    request.set_world_size(2);
    absl::StatusOr<v1::Job> job = f_.core().SubmitJob(request);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->id() : "";
  }

  // Runs the oldest queued job on a new group of `ranks` and ends it as `state`, having
  // reported a checkpoint when `checkpoint` is set. Returns what the group acquired.
  v1::AcquireJobResponse Finish(v1::JobState state, bool checkpoint, int ranks = 2) {
    const std::string group = f_.Register(ranks);
    const v1::AcquireJobResponse acquired = f_.Acquire(group);
    v1::ReportProgressRequest report;
    report.set_group_id(group);
    report.set_job_id(acquired.job().id());
    report.set_attempt(acquired.job().attempts());
    report.set_final_state(state);
    if (checkpoint) {
      report.mutable_checkpoint()->set_host("worker-host");
      report.mutable_checkpoint()->set_run_folder("/runs/" + acquired.job().id());
      report.mutable_checkpoint()->set_run_step(3);
    }
    const absl::StatusOr<v1::ReportProgressResponse> reply = f_.core().ReportProgress(report);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return acquired;
  }

  v1::SubmitJobRequest Rollout(const std::string& source) {
    v1::SubmitJobRequest request;
    request.mutable_rollout()->set_source_job_id(source);
    request.mutable_rollout()->set_case_dir(case_dir_);
    request.mutable_rollout()->set_steps(6);
    return request;
  }

  testing::CoordinatorFixture f_;
  std::string flow_dir_, case_dir_;
};

TEST_F(RolloutJobTest, ARolloutOfAFinishedRunTakesItsCheckpointAndRunsOnAnyGroupWithoutAPlan) {
  const std::string source = SubmitPix2pix();
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true);
  const v1::Job source_job = *f_.core().GetJob(source);

  absl::StatusOr<v1::Job> job = f_.core().SubmitJob(Rollout(source));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(job->has_rollout());
  EXPECT_EQ(job->name(), "rollout of " + source + ": case-2");
  EXPECT_EQ(job->spec().SerializeAsString(), source_job.spec().SerializeAsString());
  EXPECT_EQ(job->checkpoint().run_folder(), "/runs/" + source);
  EXPECT_EQ(job->checkpoint().run_step(), 3);
  absl::StatusOr<std::vector<v1::JobEvent>> history = f_.core().EventsAfter(job->id(), 0, 10);
  ASSERT_TRUE(history.ok());
  EXPECT_THAT(history->front().state().message(),
              HasSubstr("rolls out " + source + " into worker-host:/runs/" + source + "/rollout-case-2"));

  // Three ranks could not split the source's batch of 8 evenly enough to train it, but a
  // rollout has no batch: any group runs it, with no plan; a checkpoint the group
  // reports does not replace the source's.
  const v1::AcquireJobResponse acquired = Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true, /*ranks=*/3);
  EXPECT_EQ(acquired.job().id(), job->id());
  EXPECT_EQ(acquired.plan().shares_size(), 0);
  const v1::Job done = *f_.core().GetJob(job->id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(done.checkpoint().run_folder(), "/runs/" + source);
}

TEST_F(RolloutJobTest, ARunningRolloutsOutlookIsItsStepsDone) {
  v1::Job job;
  job.set_state(v1::JOB_STATE_RUNNING);
  job.mutable_rollout()->set_steps(40);
  job.mutable_progress()->set_step(10);
  job.mutable_progress()->set_steps_per_epoch(40);
  job.mutable_progress()->set_samples_per_s(300);
  const std::optional<JobOutlook> o = OutlookOf(job);
  ASSERT_TRUE(o.has_value());
  EXPECT_DOUBLE_EQ(o->fraction_done, 0.25);
  EXPECT_FALSE(o->eta_seconds.has_value());
}

TEST_F(RolloutJobTest, TheSourceMustExistHaveSucceededWithACheckpointAndBeAFlowModel) {
  auto refusal = [&](const v1::SubmitJobRequest& request) { return f_.core().SubmitJob(request).status(); };
  absl::Status s = refusal(Rollout("job-99"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("rollout.source_job_id: no job 'job-99'"));

  const std::string queued = SubmitPix2pix();
  s = refusal(Rollout(queued));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(queued + " is queued; only a run that succeeded can be rolled out (wait for it: "
                                     "gantry watch " + queued + ")"));
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/false);
  s = refusal(Rollout(queued));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("reported no checkpoint"));

  const std::string failed = SubmitPix2pix();
  Finish(v1::JOB_STATE_FAILED, /*checkpoint=*/true);
  EXPECT_THAT(refusal(Rollout(failed)).message(), HasSubstr(failed + " is failed; only a run that succeeded"));

  const std::string dcgan = f_.Submit({8}, 1, 2);
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true);
  s = refusal(Rollout(dcgan));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("trained --model dcgan on --dataset mnist, not a next-frame model"));

  const std::string good = SubmitPix2pix();
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true);
  absl::StatusOr<v1::Job> rollout = f_.core().SubmitJob(Rollout(good));
  ASSERT_TRUE(rollout.ok()) << rollout.status();
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/false);
  s = refusal(Rollout(rollout->id()));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is a rollout itself; give the training job it rolled out, " + good));
}

TEST_F(RolloutJobTest, BadFieldsAreRefusedByNameWithTheFix) {
  const std::string source = SubmitPix2pix();
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true);
  std::filesystem::create_directories(f_.root() + "/empty");
  const std::string outside = testing::MakeTempDir("rollout_outside");
  std::ofstream(outside + "/flow.json") << "{}\n";
  struct Case {
    std::function<void(v1::SubmitJobRequest&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.mutable_rollout()->set_steps(0); }, "rollout.steps: bad value '0' (an integer in [1, 1000000])"},
      {[](auto& r) { r.mutable_rollout()->set_steps(-3); }, "rollout.steps: bad value '-3' (an integer in [1, "},
      {[](auto& r) { r.mutable_rollout()->clear_case_dir(); }, "rollout.case_dir: required"},
      {[&](auto& r) { r.mutable_rollout()->set_case_dir(outside); }, "rollout.case_dir"},
      {[&](auto& r) { r.mutable_rollout()->set_case_dir(f_.root() + "/empty"); }, "holds no flow.json"},
      {[&](auto& r) { r.mutable_rollout()->set_case_dir(f_.root() + "/missing"); }, "rollout.case_dir"},
      {[](auto& r) { r.mutable_rollout()->mutable_tile()->set_value(64); },
       "rollout.tile: 64: the model of job-1 takes tiles of its --image-size 32; use 32"},
      {[](auto& r) { r.mutable_rollout()->mutable_overlap()->set_value(32); },
       "rollout.overlap: 32 must be below the tile, job-1's --image-size 32"},
      {[](auto& r) {
         r.mutable_rollout()->mutable_tile()->set_value(32);
         r.mutable_rollout()->mutable_overlap()->set_value(40);
       },
       "rollout.overlap: 40 must be below the tile (32)"},
      {[](auto& r) { r.mutable_rollout()->mutable_overlap()->set_value(-1); },
       "rollout.overlap: bad value '-1' (an integer in [0, 4095])"},
      {[](auto& r) { r.mutable_rollout()->mutable_start_frame()->set_value(-1); },
       "rollout.start_frame: bad value '-1'"},
      {[](auto& r) { r.mutable_rollout()->set_blend("cubic"); }, "rollout.blend: 'cubic' is not gaussian, linear or none"},
      {[](auto& r) { r.mutable_rollout()->mutable_group()->set_value(0); },
       "rollout.group: bad value '0' (an integer in [1, 65536])"},
      {[](auto& r) { r.mutable_rollout()->mutable_tile_batch()->set_value(0); },
       "rollout.tile_batch: bad value '0' (an integer in [1, 4096])"},
      // Issue 29: start frames and tile batches past any case or any memory.
      {[](auto& r) { r.mutable_rollout()->mutable_start_frame()->set_value(9223372036854774808); },
       "rollout.start_frame: bad value '9223372036854774808' (an integer in [0, 1000000000])"},
      {[](auto& r) { r.mutable_rollout()->mutable_tile_batch()->set_value(INT64_MAX); },
       "rollout.tile_batch: bad value '9223372036854775807'"},
      {[](auto& r) { r.mutable_spec()->set_model("pix2pix"); }, "spec: leave it unset with rollout"},
      {[](auto& r) { r.set_world_size(-1); }, "world_size: -1"},
      {[](auto& r) { r.set_name("two\nlines"); }, "name"},
  };
  for (const Case& c : cases) {
    v1::SubmitJobRequest request = Rollout(source);
    c.change(request);
    const absl::Status s = f_.core().SubmitJob(request).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  v1::SubmitJobRequest fine = Rollout(source);
  fine.mutable_rollout()->mutable_tile()->set_value(32);
  fine.mutable_rollout()->mutable_overlap()->set_value(8);
  fine.mutable_rollout()->set_blend("linear");
  EXPECT_TRUE(f_.core().SubmitJob(fine).ok());
}

TEST_F(RolloutJobTest, AQueuedRolloutSurvivesARestartUnlessItsCaseWentAway) {
  const std::string source = SubmitPix2pix();
  Finish(v1::JOB_STATE_SUCCEEDED, /*checkpoint=*/true);
  const std::string kept = f_.core().SubmitJob(Rollout(source))->id();
  f_.Reopen();
  EXPECT_EQ(f_.core().GetJob(kept)->state(), v1::JOB_STATE_QUEUED);
  std::filesystem::remove(case_dir_ + "/flow.json");
  f_.Reopen();
  const v1::Job failed = *f_.core().GetJob(kept);
  EXPECT_EQ(failed.state(), v1::JOB_STATE_FAILED);
  EXPECT_THAT(failed.error(), HasSubstr("holds no flow.json"));
}

}  // namespace
}  // namespace gantry
