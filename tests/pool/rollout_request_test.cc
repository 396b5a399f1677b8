#include "worker/pool/rollout_request.h"

#include "gtest/gtest.h"
#include "runspec/rollout_spec_check.h"
#include "worker/infer/tile_blend.h"

namespace gantry {
namespace {

TEST(RolloutRequestFor, TheSourcesRunFolderIsTheRunAndUnsetFieldsKeepTheCommandsDefaults) {
  v1::Job job;
  job.set_id("job-4");
  job.mutable_checkpoint()->set_run_folder("/runs/job-3");
  job.mutable_rollout()->set_source_job_id("job-3");
  job.mutable_rollout()->set_case_dir("/data/case-2");
  job.mutable_rollout()->set_steps(12);
  const RolloutRequest defaults;
  RolloutRequest r = RolloutRequestFor(job);
  EXPECT_EQ(r.run_dir, "/runs/job-3");
  EXPECT_EQ(r.case_dir, "/data/case-2");
  EXPECT_EQ(r.steps, 12);
  EXPECT_EQ(r.start_frame, defaults.start_frame);
  EXPECT_EQ(r.tile, defaults.tile);
  EXPECT_EQ(r.overlap, defaults.overlap);
  EXPECT_EQ(r.blend, defaults.blend);
  EXPECT_EQ(r.group_size, defaults.group_size);
  EXPECT_EQ(r.batch, defaults.batch);
  // The job's own folder, RUN/rollout-<case>-<job id>: no other rollout writes there.
  EXPECT_EQ(r.out, "/runs/job-3/rollout-case-2-job-4");
  EXPECT_TRUE(r.own_folder);

  job.mutable_rollout()->mutable_start_frame()->set_value(0);
  job.mutable_rollout()->mutable_tile()->set_value(32);
  job.mutable_rollout()->mutable_overlap()->set_value(0);
  job.mutable_rollout()->set_blend("none");
  job.mutable_rollout()->mutable_group()->set_value(3);
  job.mutable_rollout()->mutable_tile_batch()->set_value(2);
  r = RolloutRequestFor(job);
  EXPECT_EQ(r.tile, 32);
  EXPECT_EQ(r.overlap, 0);
  EXPECT_EQ(r.blend, "none");
  EXPECT_EQ(r.group_size, 3);
  EXPECT_EQ(r.batch, 2);
}

// The coordinator checks blend names without the worker's code: both must agree.
TEST(RolloutRequestFor, EveryBlendTheCoordinatorAcceptsTheWorkerParses) {
  v1::RolloutSpec spec;
  spec.set_source_job_id("job-3");
  spec.set_case_dir("/data/case-2");
  spec.set_steps(1);
  for (const char* name : {"gaussian", "linear", "none", "cubic", "Gaussian"}) {
    spec.set_blend(name);
    EXPECT_EQ(CheckRolloutSpec(spec).ok(), ParseBlendMode(name).ok()) << name;
  }
}

}  // namespace
}  // namespace gantry
