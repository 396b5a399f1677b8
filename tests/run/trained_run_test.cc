// OpenTrainedRun: one trained model on every rank, from run.json read once and the
// checkpoint asked for; and the refusals, alike on every rank.
#include "worker/run/trained_run.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/training_fixtures.h"
#include "worker/checkpoint/checkpoint_codec.h"
#include "worker/checkpoint/checkpoint_store.h"
#include "worker/comm/local_communicator.h"
#include "worker/run/recorded_run.h"
#include "worker/run/run_manifest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kImages = 24;

// A run folder of the quick test run with checkpoints at `steps`; each checkpoint's
// generator holds the value step/1000 in every parameter.
std::string MakeRun(const std::vector<int64_t>& steps, bool record_images = true) {
  const std::string dir = testing::FreshTestDir("trained_run");
  const RawSettings settings = {{"batch-size", "4"}, {"epochs", "2"}, {"checkpoint-every-steps", "4"}, {"out", dir}};
  const TrainConfig config = *ResolveTrainConfig(settings);
  std::string manifest = RunManifestJson(config, settings, "/data", record_images ? kImages : 0, "eigen", "", 1, "local");
  std::ofstream(dir + "/run.json") << manifest;
  CheckpointStore store(dir + "/checkpoints");
  for (int64_t step : steps) {
    TrainingState state = testing::FreshState(config, testing::TinyImages(kImages));
    state.position.run_step = step;
    for (float& p : state.g.params) p = static_cast<float>(step) / 1000.0f;
    EXPECT_TRUE(store.Save(step, EncodeCheckpoint(state), 3, ExpectationsFor(config, kImages)).ok());
  }
  return dir;
}

// OpenTrainedRun on `ranks` thread ranks; each rank's result.
std::vector<absl::StatusOr<TrainedRun>> OpenOnRanks(int ranks, const TrainedRunRequest& request,
                                                    std::vector<bool>* failed = nullptr) {
  LocalGroup group(ranks);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < ranks; ++r) comms.push_back(group.Rank(r));
  std::vector<absl::StatusOr<TrainedRun>> got;
  for (int r = 0; r < ranks; ++r) got.emplace_back(absl::UnknownError("not run"));
  std::vector<bool> collective_failed(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      bool f = false;
      got[r] = OpenTrainedRun(*comms[r], request, &f);
      collective_failed[r] = f;
    });
  }
  for (std::thread& t : threads) t.join();
  if (failed != nullptr) *failed = collective_failed;
  return got;
}

float FirstGeneratorParameter(const TrainedRun& run) { return run.model->g_params().params().data()[0]; }

TEST(OpenTrainedRun, GivesEveryRankTheNewestUsableCheckpointsNetworks) {
  const std::string run = MakeRun({4, 8});
  std::vector<absl::StatusOr<TrainedRun>> got = OpenOnRanks(2, {.run_dir = run});
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(got[r].ok()) << got[r].status();
    EXPECT_FLOAT_EQ(FirstGeneratorParameter(*got[r]), 0.008f);
    EXPECT_EQ(got[r]->position.run_step, 8);
    EXPECT_EQ(got[r]->settings.config.out, run);
    EXPECT_EQ(got[r]->settings.config.batch_sizes, std::vector<int64_t>{4});
  }
  EXPECT_EQ(got[0]->checkpoint_path, run + "/checkpoints/ckpt-8.bin");
  EXPECT_EQ(got[1]->checkpoint_path, "");  // rank 0 alone reads the disk
}

TEST(OpenTrainedRun, LoadsTheCheckpointOfTheStepAskedFor) {
  const std::string run = MakeRun({4, 8});
  std::vector<absl::StatusOr<TrainedRun>> got = OpenOnRanks(2, {.run_dir = run, .checkpoint_step = 4});
  for (const auto& g : got) {
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_FLOAT_EQ(FirstGeneratorParameter(*g), 0.004f);
  }
  got = OpenOnRanks(2, {.run_dir = run, .checkpoint_step = 5, .purpose = "generate from"});
  for (const auto& g : got) {
    EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(g.status().message(), HasSubstr("cannot generate from " + run + ": "));
    EXPECT_THAT(g.status().message(), HasSubstr("no checkpoint of step 5; it holds steps 8, 4"));
  }
}

TEST(OpenTrainedRun, RefusesAlikeOnEveryRankAndSaysItWasNotTheTransport) {
  const std::string empty = MakeRun({});
  std::vector<bool> failed;
  std::vector<absl::StatusOr<TrainedRun>> got = OpenOnRanks(2, {.run_dir = empty, .purpose = "roll out"}, &failed);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r].status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(got[r].status().message(), HasSubstr("cannot roll out " + empty + ": "));
    EXPECT_FALSE(failed[r]);
  }
  const std::string missing = testing::FreshTestDir("no_run_json");
  got = OpenOnRanks(2, {.run_dir = missing}, &failed);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r].status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got[r].status().message(), HasSubstr("not a run folder (no run.json)"));
    EXPECT_FALSE(failed[r]);
  }
}

TEST(RecordedRun, ReadsTheSettingsAndImageCountAndRefusesToMatchWithoutTheCount) {
  const std::string run = MakeRun({4});
  absl::StatusOr<RecordedRun> recorded = ReadRecordedRun(run);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(recorded->train_images, kImages);
  EXPECT_EQ(recorded->settings.at("batch-size"), "4");
  EXPECT_TRUE(ExpectationsOf(*recorded).ok());
  const std::string old = MakeRun({4}, /*record_images=*/false);
  recorded = ReadRecordedRun(old);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_THAT(ExpectationsOf(*recorded).status().message(), HasSubstr("holds no config.train_images"));
}

}  // namespace
}  // namespace gantry
