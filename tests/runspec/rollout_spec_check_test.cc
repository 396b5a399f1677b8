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
  r.clear_tile_batch();
  r.mutable_report_every()->set_value(0);
  EXPECT_THAT(CheckRolloutSpec(r).message(), HasSubstr("rollout.report_every: bad value '0' (an integer in [1, 1000000])"));
  r.mutable_report_every()->set_value(10);
  EXPECT_TRUE(CheckRolloutSpec(r).ok());
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


// The worker's flags and the coordinator's fields are refused in the same words.
TEST(RolloutSpecCheck, FlagsAndFieldsAreRefusedAlikeWithTheirRange) {
  RolloutNumbers n{.steps = 1, .start_frame = 9223372036854774808};  // the segfault
  EXPECT_EQ(CheckRolloutNumbers(n, RolloutNaming::kFlags).message(),
            "--start-frame: bad value '9223372036854774808' (an integer in [0, 1000000000])");
  EXPECT_EQ(CheckRolloutNumbers(n, RolloutNaming::kFields).message(),
            "rollout.start_frame: bad value '9223372036854774808' (an integer in [0, 1000000000])");
  v1::RolloutSpec r;
  r.set_source_job_id("job-3");
  r.set_case_dir("/data/case-2");
  r.set_steps(1);
  r.mutable_start_frame()->set_value(9223372036854774808);
  EXPECT_EQ(CheckRolloutSpec(r).message(), CheckRolloutNumbers(n, RolloutNaming::kFields).message());
  // One more of each class: every number, too small and too large.
  const struct {
    RolloutNumbers numbers;
    const char* refusal;
  } cases[] = {
      {{.steps = 0}, "--steps: bad value '0' (an integer in [1, 1000000])"},
      {{.steps = 1000001}, "--steps: bad value '1000001'"},
      {{.steps = 1, .start_frame = -1}, "--start-frame: bad value '-1'"},
      {{.steps = 1, .tile = 4097}, "--tile: bad value '4097' (an integer in [0, 4096])"},
      {{.steps = 1, .tile = 16, .overlap = 16}, "--overlap: 16 must be below the tile (16)"},
      {{.steps = 1, .overlap = -5}, "--overlap: bad value '-5'"},
      {{.steps = 1, .group = 0}, "--group: bad value '0' (an integer in [1, 65536])"},
      {{.steps = 1, .tile_batch = 4097}, "--tile-batch: bad value '4097' (an integer in [1, 4096])"},
      {{.steps = 1, .tile_batch = INT64_MAX}, "--tile-batch: bad value '9223372036854775807'"},
      {{.steps = 1, .report_every = 0}, "--report-every: bad value '0' (an integer in [1, 1000000])"},
  };
  for (const auto& c : cases) EXPECT_THAT(CheckRolloutNumbers(c.numbers, RolloutNaming::kFlags).message(),
                                          HasSubstr(c.refusal));
  EXPECT_TRUE(CheckRolloutNumbers({.steps = 1000000, .start_frame = 1000000000, .tile = 4096, .overlap = 4095,
                                   .group = 65536, .tile_batch = 4096},
                                  RolloutNaming::kFlags)
                  .ok());
}

TEST(RolloutSpecCheck, EachJobHasAFolderOfItsOwn) {
  EXPECT_EQ(RolloutJobOutputFolder("/runs/job-3", "/data/flow/case-2/", "job-7"), "/runs/job-3/rollout-case-2-job-7");
  EXPECT_NE(RolloutJobOutputFolder("/runs/job-3", "/data/case-2", "job-7"),
            RolloutJobOutputFolder("/runs/job-3", "/data/case-2", "job-8"));
}

}  // namespace
}  // namespace gantry
