// The RunSpec `gantry submit` makes from a run file resolves to the configuration
// `gantry-worker train --config` resolves from the same file: the CLI, the coordinator
// and the worker read runs through one library (runspec/).
#include "cli/submit_request.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/run_file.h"
#include "runspec/run_spec_settings.h"

namespace gantry::cli {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// What the worker makes of the spec the coordinator hands it.
absl::StatusOr<TrainConfig> WorkerConfigOf(const v1::RunSpec& spec) {
  return ResolveTrainConfig(RunSpecToSettings(spec));
}

TEST(SubmitRequest, TheSpecResolvesAsTheWorkerResolvesTheRunFile) {
  const std::string file = WriteTemp("every.yaml", R"(model: dcgan
dataset: mnist
data_dir: /srv/data/mnist
epochs: 3
batch-size: [512, 64]
optimizer: sgd
lr: 0.003
beta1: 0
momentum: 0.85
dropout: 0.25
init: normal
seed: 0
max_steps: 40
limit-images: 1000
sync-bn: true
rebalance: yes
straggler-factor: 1.5
straggler-window: 7
comm-timeout: 45.5
precision: bf16
loss-scale: dynamic
loss-scale-init: 1024
loss-scale-growth-interval: 50
allreduce-dtype: fp32
checkpoint-every-steps: 11
keep-checkpoints: 2
kernels: eigen
device: cpu
)");
  SubmitArgs args;
  args.run_file = file;
  args.world_size = 2;
  const absl::StatusOr<v1::SubmitJobRequest> request = BuildSubmitRequest(args);
  ASSERT_TRUE(request.ok()) << request.status();
  const absl::StatusOr<TrainConfig> from_spec = WorkerConfigOf(request->spec());
  const absl::StatusOr<RawSettings> raw = ReadRunFile(file);
  ASSERT_TRUE(raw.ok()) << raw.status();
  const absl::StatusOr<TrainConfig> from_file = ResolveTrainConfig(*raw);
  ASSERT_TRUE(from_spec.ok()) << from_spec.status();
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_TRUE(*from_spec == *from_file);
  // Spot checks that the comparison compares something.
  EXPECT_EQ(from_spec->batch_sizes, (std::vector<int64_t>{512, 64}));
  EXPECT_EQ(from_spec->seed, 0u);
  EXPECT_EQ(from_spec->mixed.loss_scale.init_scale, 1024.0f);
  EXPECT_TRUE(from_spec->sync_bn);
  EXPECT_EQ(request->world_size(), 2);
}

TEST(SubmitRequest, FlagsOverrideTheFileAndRelativeDataDirsBecomeAbsolute) {
  const std::string file = WriteTemp("small.yaml", "epochs: 3\nseed: 5\ndata-dir: data/mnist\n");
  SubmitArgs args;
  args.run_file = file;
  args.settings = {{"seed", "9"}};
  const absl::StatusOr<v1::SubmitJobRequest> request = BuildSubmitRequest(args);
  ASSERT_TRUE(request.ok()) << request.status();
  const absl::StatusOr<TrainConfig> config = WorkerConfigOf(request->spec());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->seed, 9u);
  EXPECT_EQ(config->epochs, 3);
  EXPECT_EQ(config->data_dir, (std::filesystem::current_path() / "data/mnist").string());
}

TEST(SubmitRequest, ABadRunFileIsAnErrorNotACrash) {
  const std::string dir = ::testing::TempDir() + "/a_folder";
  std::filesystem::create_directories(dir);
  SubmitArgs args;
  args.run_file = dir;
  EXPECT_THAT(std::string(BuildSubmitRequest(args).status().message()), HasSubstr("is a directory"));
  args.run_file = WriteTemp("unknown.yaml", "epoch: 3\n");
  EXPECT_THAT(std::string(BuildSubmitRequest(args).status().message()), HasSubstr("unknown setting 'epoch'"));
}

TEST(SubmitRequest, ARolloutCarriesOnlyTheOptionsGivenAndAnAbsoluteCase) {
  RolloutArgs args;
  args.source_job_id = "job-3";
  args.case_dir = "data/../data/case-2/";
  args.steps = 20;
  args.overlap = 0;  // given as 0: present, not left to the default
  args.world_size = 2;
  const v1::SubmitJobRequest request = BuildRolloutRequest(args);
  EXPECT_FALSE(request.has_spec());
  const v1::RolloutSpec& r = request.rollout();
  EXPECT_EQ(r.source_job_id(), "job-3");
  EXPECT_EQ(r.case_dir(), (std::filesystem::current_path() / "data/case-2/").string());
  EXPECT_EQ(r.steps(), 20);
  ASSERT_TRUE(r.has_overlap());
  EXPECT_EQ(r.overlap().value(), 0);
  EXPECT_FALSE(r.has_tile());
  EXPECT_FALSE(r.has_start_frame());
  EXPECT_FALSE(r.has_group());
  EXPECT_FALSE(r.has_tile_batch());
  EXPECT_EQ(r.blend(), "");
  EXPECT_EQ(request.world_size(), 2);
}

}  // namespace
}  // namespace gantry::cli
