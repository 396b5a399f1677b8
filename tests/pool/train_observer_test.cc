// The trainer's observer hooks on two ranks as threads: what rank 0's observer sees,
// the shares it plans, and the stop agreement that halts every rank before the same step.
#include "worker/train/train_observer.h"

#include <stdlib.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"
#include "worker/tensor/backend.h"
#include "worker/train/trainer.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Records every hook; plans shares with `plan` and asks to stop from poll `stop_at_poll`
// (1-based; 0: never).
class Recorder : public TrainObserver {
 public:
  std::function<std::optional<std::vector<int64_t>>(int64_t, int64_t)> plan;
  int stop_at_poll = 0;

  std::vector<std::pair<int64_t, int64_t>> asked;
  std::vector<StepProgress> steps;
  std::vector<EpochRow> rows;
  std::vector<std::vector<RankWindow>> windows;
  int polls = 0;

  std::optional<std::vector<int64_t>> SharesFor(int64_t batch, int64_t epoch) override {
    asked.emplace_back(batch, epoch);
    return plan ? plan(batch, epoch) : std::nullopt;
  }
  void OnStep(const StepProgress& p) override { steps.push_back(p); }
  void OnEpochRow(const EpochRow& row, const std::vector<RankWindow>& w) override {
    rows.push_back(row);
    windows.push_back(w);
  }
  bool ShouldStop() override { return stop_at_poll > 0 && ++polls >= stop_at_poll; }
};

// 64 synthetic 28x28 images: 4 steps per epoch at global batch 16.
ImageDataset SyntheticImages() {
  ImageDataset data;
  data.count = 64;
  data.height = data.width = 28;
  for (int64_t i = 0; i < data.count * data.sample_numel(); ++i) {
    data.pixels.push_back(static_cast<float>((i * 7919) % 255) / 127.5f - 1.0f);
  }
  data.labels.assign(static_cast<size_t>(data.count), 0);
  return data;
}

std::vector<int64_t> Shares(const std::vector<RankWindow>& windows) {
  std::vector<int64_t> shares;
  for (const RankWindow& w : windows) shares.push_back(w.share);
  return shares;
}

struct TwoRankRun {
  std::string folder_path;
  Recorder observers[2];
  absl::Status status[2];
};

// Trains batch 16 for `epochs` epochs on two thread ranks, each with its observer.
void Train(TwoRankRun& run, int64_t epochs = 2) {
  std::string dir = ::testing::TempDir() + "/gantry_observer_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  run.folder_path = dir + "/run";
  absl::StatusOr<RunFolder> folder = RunFolder::Create(run.folder_path);
  ASSERT_TRUE(folder.ok()) << folder.status();
  TrainConfig config;
  config.batch_sizes = {16};
  config.epochs = epochs;
  config.progress_seconds = 1e6;
  config.comm_timeout_seconds = 120;
  const ImageDataset data = SyntheticImages();
  LocalGroup group(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r, comm = group.Rank(r)]() {
      Trainer trainer(config, data, r == 0 ? &*folder : nullptr, *comm, Clock::Real(), CpuBackend());
      trainer.set_observer(&run.observers[r]);
      run.status[r] = trainer.Run().status();
    });
  }
  for (std::thread& t : ranks) t.join();
}

std::vector<std::string> CsvRows(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  if (!lines.empty()) lines.erase(lines.begin());  // the header
  return lines;
}

TEST(TrainObserver, SeesEveryStepAndEpochAndPlansTheShares) {
  TwoRankRun run;
  run.observers[0].plan = [](int64_t, int64_t epoch) -> std::optional<std::vector<int64_t>> {
    if (epoch == 2) return std::vector<int64_t>{6, 10};
    return std::nullopt;
  };
  ASSERT_NO_FATAL_FAILURE(Train(run));
  ASSERT_TRUE(run.status[0].ok()) << run.status[0];
  ASSERT_TRUE(run.status[1].ok()) << run.status[1];
  const Recorder& root = run.observers[0];
  EXPECT_THAT(root.asked, ElementsAre(Pair(16, 1), Pair(16, 2)));
  ASSERT_EQ(root.steps.size(), 8u);
  EXPECT_EQ(root.steps[0].step, 1);
  EXPECT_EQ(root.steps[3].step, 4);
  EXPECT_EQ(root.steps[3].steps_in_epoch, 4);
  EXPECT_EQ(root.steps[4].epoch, 2);
  EXPECT_EQ(root.steps[7].global_step, 8);
  EXPECT_GT(root.steps[7].samples_per_s, 0);
  ASSERT_EQ(root.windows.size(), 2u);
  EXPECT_THAT(Shares(root.windows[0]), ElementsAre(8, 8));
  EXPECT_THAT(Shares(root.windows[1]), ElementsAre(6, 10)) << "the planned split was used in epoch 2";
  EXPECT_EQ(root.windows[1][1].window_steps, 4);
  EXPECT_GT(root.windows[1][1].median.compute_s, 0);
  // The rows the observer saw are the rows of epochs.csv.
  const std::vector<std::string> csv = CsvRows(run.folder_path + "/epochs.csv");
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(EpochCsvLine(root.rows[0]), csv[0]);
  EXPECT_EQ(EpochCsvLine(root.rows[1]), csv[1]);
  // Rank 1 is only polled.
  EXPECT_TRUE(run.observers[1].asked.empty());
  EXPECT_TRUE(run.observers[1].steps.empty());
  EXPECT_TRUE(run.observers[1].rows.empty());
}

TEST(TrainObserver, AStopOnAnyRankStopsEveryRankBeforeTheSameStep) {
  TwoRankRun run;
  run.observers[1].stop_at_poll = 3;  // rank 1 alone asks, before its third step
  ASSERT_NO_FATAL_FAILURE(Train(run, /*epochs=*/1));
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(absl::IsCancelled(run.status[r])) << "rank " << r << ": " << run.status[r];
    EXPECT_EQ(run.status[r].message(), "stopped before batch 16 epoch 1 step 3");
  }
  EXPECT_EQ(run.observers[0].steps.size(), 2u);
  EXPECT_TRUE(run.observers[0].rows.empty());
}

TEST(TrainObserver, AnUnusablePlanIsIgnored) {
  TwoRankRun run;
  run.observers[0].plan = [](int64_t, int64_t) -> std::optional<std::vector<int64_t>> {
    return std::vector<int64_t>{5, 5};  // sums to 10, not 16
  };
  ASSERT_NO_FATAL_FAILURE(Train(run, /*epochs=*/1));
  ASSERT_TRUE(run.status[0].ok()) << run.status[0];
  ASSERT_EQ(run.observers[0].windows.size(), 1u);
  EXPECT_THAT(Shares(run.observers[0].windows[0]), ElementsAre(8, 8));
}

TEST(UsableShares, AcceptsOnlyAWholeSplitOfTheBatch) {
  EXPECT_EQ(UsableShares(std::nullopt, 16, 2), std::nullopt);
  EXPECT_THAT(UsableShares(std::vector<int64_t>{3, 13}, 16, 2), ::testing::Optional(ElementsAre(3, 13)));
  EXPECT_EQ(UsableShares(std::vector<int64_t>{16}, 16, 2), std::nullopt);      // one share for two ranks
  EXPECT_EQ(UsableShares(std::vector<int64_t>{0, 16}, 16, 2), std::nullopt);   // a rank without rows
  EXPECT_EQ(UsableShares(std::vector<int64_t>{8, 9}, 16, 2), std::nullopt);    // 17 rows
}

}  // namespace
}  // namespace gantry
