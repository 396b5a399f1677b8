#include "runspec/rollout_spec_check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(RolloutSpecCheck, TheOutputFolderIsNamedAfterTheCaseFolderHoweverItIsWritten) {
  EXPECT_EQ(RolloutOutputFolder("/runs/job-3", "/data/flow/case-2"), "/runs/job-3/rollout-case-2");
  EXPECT_EQ(RolloutOutputFolder("/runs/job-3", "/data/flow/case-2/"), "/runs/job-3/rollout-case-2");
  EXPECT_EQ(RolloutOutputFolder("runs/x", "data/./other/../case-2"), "runs/x/rollout-case-2");
  EXPECT_EQ(RolloutCaseName("case-2/"), "case-2");
}

TEST(RolloutSpecCheck, OnlyTheRequiredFieldsAreNeededAndEachBadOneIsNamed) {
  v1::RolloutSpec r;
  r.set_source_job_id("job-3");
  r.set_case_dir("/data/case-2");
  r.set_steps(1);
  EXPECT_TRUE(CheckRolloutSpec(r).ok());
  r.set_steps(kMaxRolloutSteps + 1);
  EXPECT_THAT(CheckRolloutSpec(r).message(), HasSubstr("rollout.steps: "));
  r.set_steps(1);
  r.clear_source_job_id();
  EXPECT_THAT(CheckRolloutSpec(r).message(), HasSubstr("rollout.source_job_id: required"));
  r.set_source_job_id("job-3");
  r.mutable_tile_batch()->set_value(kMaxRolloutTileBatch + 1);
  EXPECT_THAT(CheckRolloutSpec(r).message(), HasSubstr("rollout.tile_batch: "));
}

TEST(RolloutSpecCheck, TheRunMustBeAPix2pixFlowRunWhoseImageSizeIsTheTile) {
  v1::RolloutSpec r;
  TrainConfig run;
  run.model = "pix2pix";
  run.dataset = "flow";
  run.pix2pix.image_size = 64;
  EXPECT_TRUE(CheckRolloutFitsRun(r, run, "job-3").ok());
  r.mutable_tile()->set_value(64);
  r.mutable_overlap()->set_value(63);
  EXPECT_TRUE(CheckRolloutFitsRun(r, run, "job-3").ok());
  r.mutable_overlap()->set_value(64);
  EXPECT_THAT(CheckRolloutFitsRun(r, run, "job-3").message(), HasSubstr("rollout.overlap: 64 must be below the tile"));
  r.mutable_tile()->set_value(32);
  r.clear_overlap();
  EXPECT_THAT(CheckRolloutFitsRun(r, run, "job-3").message(), HasSubstr("use 64"));
  run.model = "dcgan";
  run.dataset = "mnist";
  EXPECT_THAT(CheckRolloutFitsRun(r, run, "job-3").message(), HasSubstr("roll out a run of --model pix2pix"));
}

}  // namespace
}  // namespace gantry
