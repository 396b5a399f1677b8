// Generate jobs at the coordinator (SubmitJobRequest.generate): checked against their
// source job at submission, queued with its spec and checkpoint and a folder name of
// their own, run by any group without a shard plan, and kept across a restart.
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

class GenerateJobTest : public ::testing::Test {
 protected:
  GenerateJobTest() : f_("generate_job") {
    case_dir_ = f_.root() + "/flow/case-1";
    std::filesystem::create_directories(case_dir_);
    std::ofstream(case_dir_ + "/flow.json") << "{}\n";
  }

  // Runs the oldest queued job on a new group of `ranks` and ends it SUCCEEDED with a
  // checkpoint (`checkpoint`) or none. Returns what the group acquired.
  v1::AcquireJobResponse Finish(bool checkpoint, int ranks = 2, v1::JobState state = v1::JOB_STATE_SUCCEEDED) {
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
    EXPECT_TRUE(f_.core().ReportProgress(report).ok());
    return acquired;
  }

  // A finished DCGAN run (batch 8 on 2 ranks) with a checkpoint.
  std::string FinishedDcgan() {
    const std::string id = f_.Submit({8}, 1, 2);
    Finish(/*checkpoint=*/true);
    return id;
  }

  static v1::SubmitJobRequest Generate(const std::string& source, int64_t count = 16) {
    v1::SubmitJobRequest request;
    request.mutable_generate()->set_source_job_id(source);
    request.mutable_generate()->mutable_count()->set_value(count);
    return request;
  }

  testing::CoordinatorFixture f_;
  std::string case_dir_;
};

TEST_F(GenerateJobTest, AGenerateOfAFinishedRunWritesAFolderNamedAfterItselfAndRunsOnAnyGroup) {
  const std::string source = FinishedDcgan();
  const v1::Job source_job = *f_.core().GetJob(source);
  absl::StatusOr<v1::Job> job = f_.core().SubmitJob(Generate(source));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(job->generate().name(), job->id()) << "each job writes a folder of its own";
  EXPECT_EQ(job->name(), "samples of " + source + ": generate-" + job->id());
  EXPECT_EQ(job->spec().SerializeAsString(), source_job.spec().SerializeAsString());
  EXPECT_EQ(job->checkpoint().run_folder(), "/runs/" + source);
  absl::StatusOr<std::vector<v1::JobEvent>> history = f_.core().EventsAfter(job->id(), 0, 10);
  ASSERT_TRUE(history.ok());
  EXPECT_THAT(history->front().state().message(),
              HasSubstr("samples " + source + " into worker-host:/runs/" + source + "/generate-" + job->id()));

  v1::SubmitJobRequest named = Generate(source);
  named.mutable_generate()->set_name("best.v2");
  EXPECT_EQ(f_.core().SubmitJob(named)->generate().name(), "best.v2");

  // Three ranks: no batch to split; no plan; the source's checkpoint stays the reference.
  const v1::AcquireJobResponse acquired = Finish(/*checkpoint=*/true, /*ranks=*/3);
  EXPECT_EQ(acquired.job().id(), job->id());
  EXPECT_EQ(acquired.plan().shares_size(), 0);
  const v1::Job done = *f_.core().GetJob(job->id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(done.checkpoint().run_folder(), "/runs/" + source);
}

TEST_F(GenerateJobTest, TheSourceMustBeAFinishedTrainingRunWithACheckpoint) {
  auto refusal = [&](const v1::SubmitJobRequest& request) { return f_.core().SubmitJob(request).status(); };
  absl::Status s = refusal(Generate("job-99"));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("generate.source_job_id: no job 'job-99' to sample"));
  const std::string queued = f_.Submit({8}, 1, 2);
  s = refusal(Generate(queued));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(queued + " is queued; only a run that succeeded can be sampled"));
  Finish(/*checkpoint=*/false);
  EXPECT_THAT(refusal(Generate(queued)).message(), HasSubstr("reported no checkpoint"));

  const std::string good = FinishedDcgan();
  const std::string generate = f_.core().SubmitJob(Generate(good))->id();
  Finish(/*checkpoint=*/false);
  s = refusal(Generate(generate));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is a generate itself; give the training job it sampled, " + good));
}

TEST_F(GenerateJobTest, BadFieldsAreRefusedByNameWithTheFix) {
  const std::string source = FinishedDcgan();
  struct Case {
    std::function<void(v1::SubmitJobRequest&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.mutable_generate()->mutable_count()->set_value(0); },
       "generate.count: bad value '0' (an integer in [1, 100000])"},
      {[](auto& r) { r.mutable_generate()->mutable_count()->set_value(100001); },
       "generate.count: bad value '100001' (an integer in [1, 100000])"},
      {[](auto& r) { r.mutable_generate()->clear_count(); }, "generate.count: say how many samples"},
      {[](auto& r) { r.mutable_generate()->set_name("../x"); }, "generate.name: '../x': use letters"},
      {[](auto& r) { r.mutable_generate()->set_name(".."); }, "generate.name: '..' must be"},
      {[](auto& r) { r.mutable_generate()->set_precision("fp16"); }, "generate.precision: 'fp16' is not fp32 or bf16"},
      {[](auto& r) { r.mutable_generate()->mutable_batch()->set_value(0); },
       "generate.batch: bad value '0' (an integer in [1, 4096])"},
      {[](auto& r) { r.mutable_generate()->mutable_checkpoint()->set_value(0); }, "generate.checkpoint: bad value '0'"},
      {[](auto& r) { r.mutable_generate()->set_interpolate("1,2"); }, "generate.steps: a walk needs 2 to"},
      {[](auto& r) {
         r.mutable_generate()->set_interpolate("1,2");
         r.mutable_generate()->mutable_steps()->set_value(5);
       },
       "generate.count: leave it unset with interpolate"},
      {[](auto& r) { r.mutable_generate()->set_interpolate("a,b"); }, "generate.interpolate: 'a,b'"},
      {[](auto& r) { r.mutable_generate()->mutable_steps()->set_value(5); }, "generate.steps: the length of"},
      {[&](auto& r) { r.mutable_generate()->set_case_dir(case_dir_); }, "leave case_dir unset"},
      {[&](auto& r) { r.mutable_generate()->set_case_dir(f_.root() + "/missing"); }, "generate.case_dir"},
      {[](auto& r) { r.mutable_spec()->set_model("dcgan"); }, "spec, rollout: leave them unset with generate"},
      {[](auto& r) { r.set_world_size(-1); }, "world_size: -1"},
  };
  for (const Case& c : cases) {
    v1::SubmitJobRequest request = Generate(source);
    c.change(request);
    const absl::Status s = f_.core().SubmitJob(request).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  v1::SubmitJobRequest walk = Generate(source);
  walk.mutable_generate()->clear_count();
  walk.mutable_generate()->set_interpolate("0,9");
  walk.mutable_generate()->mutable_steps()->set_value(8);
  walk.mutable_generate()->set_precision("bf16");
  EXPECT_TRUE(f_.core().SubmitJob(walk).ok());
}

TEST_F(GenerateJobTest, APix2pixRunGeneratesFromACaseAndHasNoLatentWalk) {
  v1::SubmitJobRequest train;
  train.mutable_spec()->set_model("pix2pix");
  train.mutable_spec()->set_dataset("flow");
  train.mutable_spec()->set_data_dir(f_.root() + "/flow");
  train.mutable_spec()->add_batch_sizes(8);
  train.mutable_spec()->mutable_image_size()->set_value(32);
  train.set_world_size(2);
  const std::string source = f_.core().SubmitJob(train)->id();
  Finish(/*checkpoint=*/true);
  EXPECT_THAT(f_.core().SubmitJob(Generate(source)).status().message(),
              HasSubstr("generate.case_dir: " + source + " trained a next-frame model"));
  v1::SubmitJobRequest request = Generate(source, 3);
  request.mutable_generate()->set_case_dir(case_dir_);
  absl::StatusOr<v1::Job> job = f_.core().SubmitJob(request);
  ASSERT_TRUE(job.ok()) << job.status();
  request.mutable_generate()->clear_count();
  request.mutable_generate()->set_interpolate("0,1");
  request.mutable_generate()->mutable_steps()->set_value(3);
  EXPECT_THAT(f_.core().SubmitJob(request).status().message(), HasSubstr("generate.interpolate: "));
  // Queued, it survives a restart unless its case goes away.
  f_.Reopen();
  EXPECT_EQ(f_.core().GetJob(job->id())->state(), v1::JOB_STATE_QUEUED);
  std::filesystem::remove(case_dir_ + "/flow.json");
  f_.Reopen();
  EXPECT_THAT(f_.core().GetJob(job->id())->error(), HasSubstr("holds no flow.json"));
}

}  // namespace
}  // namespace gantry
