#include "worker/pool/generate_request.h"

#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(GenerateRequestFor, TheSourcesRunFolderIsTheRunTheOutputIsAFolderOfItsOwnAndUnsetFieldsKeepDefaults) {
  v1::Job job;
  job.set_id("job-7");
  job.mutable_checkpoint()->set_run_folder("/runs/job-3");
  job.mutable_generate()->set_source_job_id("job-3");
  job.mutable_generate()->mutable_count()->set_value(12);
  const GenerateRequest defaults;
  GenerateRequest r = GenerateRequestFor(job);
  EXPECT_EQ(r.run_dir, "/runs/job-3");
  EXPECT_EQ(r.out, "/runs/job-3/generate-job-7");
  EXPECT_EQ(r.latent.count, 12);
  EXPECT_EQ(r.condition.count, 12);
  EXPECT_EQ(r.latent.seed, defaults.latent.seed);
  EXPECT_EQ(r.checkpoint_step, 0);
  EXPECT_EQ(r.precision, defaults.precision);
  EXPECT_EQ(r.batch, defaults.batch);
  EXPECT_EQ(r.latent.interpolate, "");
  EXPECT_EQ(r.condition.case_dir, "");

  job.mutable_generate()->set_name("best");
  job.mutable_generate()->mutable_seed()->set_value(0);
  job.mutable_generate()->mutable_checkpoint()->set_value(500);
  job.mutable_generate()->set_precision("bf16");
  job.mutable_generate()->mutable_batch()->set_value(8);
  job.mutable_generate()->set_interpolate("1,4");
  job.mutable_generate()->mutable_steps()->set_value(6);
  job.mutable_generate()->set_case_dir("/data/case-1");
  job.mutable_generate()->mutable_frame()->set_value(3);
  r = GenerateRequestFor(job);
  EXPECT_EQ(r.out, "/runs/job-3/generate-best");
  EXPECT_EQ(r.latent.seed, 0u);
  EXPECT_EQ(r.checkpoint_step, 500);
  EXPECT_EQ(r.precision, "bf16");
  EXPECT_EQ(r.batch, 8);
  EXPECT_EQ(r.latent.interpolate, "1,4");
  EXPECT_EQ(r.latent.steps, 6);
  EXPECT_EQ(r.condition.case_dir, "/data/case-1");
  EXPECT_EQ(r.condition.frame, 3);
}

}  // namespace
}  // namespace gantry
