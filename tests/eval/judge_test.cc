#include "worker/eval/judge.h"

#include <cstdlib>
#include <filesystem>

#include "common/file_io.h"
#include "gtest/gtest.h"
#include "worker/eval/judge_store.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

// Ten easy classes: class c is a bright horizontal bar at rows 2c+3..2c+4, plus noise.
ImageDataset Bars(int64_t count, uint64_t seed) {
  ImageDataset d;
  d.count = count;
  d.height = d.width = 28;
  d.images_path = "bars";
  Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    const int c = static_cast<int>(rng.Below(10));
    d.labels.push_back(static_cast<uint8_t>(c));
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const bool bar = y == 2 * c + 3 || y == 2 * c + 4;
        d.pixels.push_back(static_cast<float>((bar ? 0.8 : -0.9) + 0.1 * rng.Normal()));
      }
    }
  }
  return d;
}

JudgeOptions Quick() {
  JudgeOptions o;
  o.epochs = 3;
  o.batch_size = 32;
  o.lr = 3e-3f;
  return o;
}

TEST(Judge, LearnsEasyClassesAndScoresTheirImages) {
  const ImageDataset train = Bars(320, 1), test = Bars(100, 2);
  absl::StatusOr<std::unique_ptr<Judge>> judge = TrainJudge(CpuBackend(), train, test, "mnist", Quick());
  ASSERT_TRUE(judge.ok()) << judge.status();
  EXPECT_GT((*judge)->test_accuracy, 0.9);
  EXPECT_EQ((*judge)->test_features.count, 100);

  // Test-like images score close to the test set and diverse; one class over and over
  // scores far, with low class entropy of the mean prediction.
  const ImageDataset fresh = Bars(100, 3);
  const QualityScores good = ScoreImages(CpuBackend(), **judge, fresh.pixels.data(), fresh.count);
  ImageDataset one = Bars(100, 4);
  for (int64_t i = 0; i < one.count; ++i) {
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) one.pixels[i * 784 + y * 28 + x] = (y == 3 || y == 4) ? 0.8f : -0.9f;
    }
  }
  const QualityScores collapsed = ScoreImages(CpuBackend(), **judge, one.pixels.data(), one.count);
  EXPECT_LT(good.frechet, collapsed.frechet);
  EXPECT_GT(good.classes.marginal_entropy, 1.5);  // about log 10 = 2.3 for ten balanced classes
  EXPECT_LT(collapsed.classes.marginal_entropy, 0.5);
  EXPECT_GT(good.classes.mean_confidence, 0.5);
}

TEST(Judge, TrainingIsSeeded) {
  const ImageDataset train = Bars(64, 1), test = Bars(32, 2);
  JudgeOptions o = Quick();
  o.epochs = 1;
  auto a = TrainJudge(CpuBackend(), train, test, "mnist", o);
  auto b = TrainJudge(CpuBackend(), train, test, "mnist", o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(EncodeJudge(**a), EncodeJudge(**b));
}

TEST(Judge, RefusesImagesItCannotClassify) {
  ImageDataset wrong = Bars(8, 1);
  wrong.height = wrong.width = 14;
  EXPECT_EQ(TrainJudge(CpuBackend(), wrong, Bars(8, 2), "mnist", Quick()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ImageDataset labels = Bars(8, 1);
  labels.labels[3] = 10;
  EXPECT_EQ(TrainJudge(CpuBackend(), labels, Bars(8, 2), "mnist", Quick()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JudgeStore, RoundTripsAndRefusesDamage) {
  JudgeOptions o = Quick();
  o.epochs = 1;
  auto judge = TrainJudge(CpuBackend(), Bars(64, 1), Bars(32, 2), "fashion-mnist", o);
  ASSERT_TRUE(judge.ok());
  const std::vector<uint8_t> bytes = EncodeJudge(**judge);
  absl::StatusOr<std::unique_ptr<Judge>> back = DecodeJudge(bytes, "j.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->dataset, "fashion-mnist");
  EXPECT_EQ((*back)->test_accuracy, (*judge)->test_accuracy);
  EXPECT_EQ((*back)->test_features, (*judge)->test_features);
  EXPECT_EQ(EncodeJudge(**back), bytes);
  std::vector<uint8_t> damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x40;
  EXPECT_EQ(DecodeJudge(damaged, "j.bin").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeJudge(std::span(bytes).first(10), "j.bin").status().code(), absl::StatusCode::kDataLoss);
}

TEST(JudgeStore, SavesNextToTheDataElseInTheCacheAndFindsIt) {
  const std::string root = ::testing::TempDir() + "/judge_store";
  fs::remove_all(root);
  fs::create_directories(root + "/data");
  ASSERT_EQ(setenv("XDG_CACHE_HOME", (root + "/cache").c_str(), 1), 0);
  JudgeOptions o = Quick();
  o.epochs = 1;
  auto judge = TrainJudge(CpuBackend(), Bars(64, 1), Bars(32, 2), "mnist", o);
  ASSERT_TRUE(judge.ok());

  EXPECT_EQ(FindJudge("mnist", root + "/data").status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(FindJudge("mnist", root + "/data").status().message().find("gantry-worker train-judge --dataset mnist"),
            std::string::npos);
  absl::StatusOr<std::string> saved = SaveJudge(**judge, root + "/data");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(*saved, root + "/data/gantry-judge-mnist.bin");
  auto found = FindJudge("mnist", root + "/data");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->second, *saved);
  EXPECT_EQ(FindJudge("fashion-mnist", root + "/data").status().code(), absl::StatusCode::kNotFound);

  // A data folder that cannot be written to (here: below a regular file, which even root
  // cannot create a folder in): the cache folder instead.
  ASSERT_TRUE(WriteFileAtomically(root + "/plain_file", "x").ok());
  const std::string read_only = root + "/plain_file/data";
  saved = SaveJudge(**judge, read_only);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->rfind(root + "/cache/gantry/judge-mnist-", 0), 0u) << *saved;
  found = FindJudge("mnist", read_only);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->second, *saved);
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace gantry
