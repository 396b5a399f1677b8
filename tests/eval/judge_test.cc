#include "worker/eval/judge.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/byte_codec.h"
#include "common/crc32c.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/synthetic_images.h"
#include "worker/eval/judge_store.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

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

TEST(Judge, TheMnistShapeIsTheNetworkJudgesHadBefore) {
  // Conv 5x5 1->16, Conv 5x5 16->32, Dense 1568->64, Dense 64->10, all with biases.
  EXPECT_EQ(Judge().params().num_params(), (16 * 25 + 16) + (32 * 16 * 25 + 32) + (1568 * 64 + 64) + (64 * 10 + 10));
  EXPECT_EQ(Judge().shape(), (JudgeShape{.channels = 1, .side = 28, .classes = 10}));
}

TEST(Judge, BiggerImagesGetMoreStagesAndTheSameFeatures) {
  struct Case {
    JudgeShape shape;
    int64_t params;
  };
  const int64_t conv2 = 32 * 16 * 25 + 32, conv3 = 64 * 32 * 25 + 64, conv4 = 64 * 64 * 25 + 64;
  const int64_t dense4096 = 4096 * 64 + 64;
  const Case cases[] = {
      {{.channels = 3, .side = 28, .classes = 5}, (16 * 75 + 16) + conv2 + (1568 * 64 + 64) + (64 * 5 + 5)},
      {{.channels = 3, .side = 32, .classes = 12}, (16 * 75 + 16) + conv2 + (2048 * 64 + 64) + (64 * 12 + 12)},
      {{.channels = 3, .side = 64, .classes = 12}, (16 * 75 + 16) + conv2 + conv3 + dense4096 + (64 * 12 + 12)},
      {{.channels = 1, .side = 128, .classes = 1000},
       (16 * 25 + 16) + conv2 + conv3 + conv4 + dense4096 + (64 * 1000 + 1000)},
  };
  for (const Case& c : cases) {
    Judge judge(c.shape);
    judge.Initialize(1);
    EXPECT_EQ(judge.params().num_params(), c.params) << JudgeShapeName(c.shape);
    std::vector<float> images(static_cast<size_t>(3 * judge.image_numel()), 0.25f), features, logits;
    judge.Evaluate(CpuBackend(), images.data(), 3, &features, &logits);
    EXPECT_EQ(features.size(), static_cast<size_t>(3 * kJudgeFeatures));
    EXPECT_EQ(logits.size(), static_cast<size_t>(3 * c.shape.classes));
  }
}

TEST(Judge, RefusesShapesItCannotTakeNamingTheValue) {
  const auto refusal = [](const JudgeShape& shape) { return std::string(CheckJudgeShape(shape).message()); };
  EXPECT_THAT(refusal({.channels = 2, .side = 64, .classes = 10}), HasSubstr("not 2"));
  EXPECT_THAT(refusal({.channels = 3, .side = 48, .classes = 10}), HasSubstr("not 48"));
  EXPECT_THAT(refusal({.channels = 3, .side = 64, .classes = 1}), HasSubstr("not 1"));
  EXPECT_THAT(refusal({.channels = 3, .side = 64, .classes = 1001}), HasSubstr("not 1001"));
  EXPECT_TRUE(CheckJudgeShape({.channels = 3, .side = 128, .classes = 1000}).ok());
}

TEST(Judge, TrainsOnTheSizeAndClassesOfTheImages) {
  // A 3x32x32 judge of 12 kinds of coloured shapes (two stages, as MNIST's).
  testing::SyntheticImageSpec spec;
  spec.channels = 3;
  spec.side = 32;
  spec.kinds = 12;
  JudgeOptions o = Quick();
  o.classes = 12;
  o.epochs = 4;
  auto judge = TrainJudge(CpuBackend(), testing::SyntheticImages(960, spec, 1), testing::SyntheticImages(240, spec, 2),
                          "shapes", o);
  ASSERT_TRUE(judge.ok()) << judge.status();
  EXPECT_EQ((*judge)->shape(), (JudgeShape{.channels = 3, .side = 32, .classes = 12}));
  EXPECT_GT((*judge)->test_accuracy, 0.9);
  // Held-out images of the kinds score closer and more diverse than images of two kinds.
  const ImageDataset fresh = testing::SyntheticImages(240, spec, 3);
  spec.kinds_drawn = 2;
  const ImageDataset two = testing::SyntheticImages(240, spec, 3);
  const QualityScores good = ScoreImages(CpuBackend(), **judge, fresh.pixels.data(), fresh.count);
  const QualityScores dropped = ScoreImages(CpuBackend(), **judge, two.pixels.data(), two.count);
  EXPECT_LT(good.frechet, dropped.frechet);
  EXPECT_GT(good.classes.marginal_entropy, std::log(12.0) - 0.3);
  EXPECT_LT(dropped.classes.marginal_entropy, std::log(2.0) + 0.2);
}

TEST(Judge, AScaledJudgeOfBiggerImagesLearnsToo) {
  // 3x64x64, 8 kinds: three stages.
  testing::SyntheticImageSpec spec;
  spec.channels = 3;
  spec.side = 64;
  spec.kinds = 8;
  JudgeOptions o = Quick();
  o.classes = 8;
  auto judge = TrainJudge(CpuBackend(), testing::SyntheticImages(480, spec, 1), testing::SyntheticImages(160, spec, 2),
                          "shapes64", o);
  ASSERT_TRUE(judge.ok()) << judge.status();
  EXPECT_GT((*judge)->test_accuracy, 0.9);
}

TEST(Judge, RefusesTestImagesOfAnotherShapeAndLabelsBeyondItsClasses) {
  testing::SyntheticImageSpec spec;
  spec.side = 32;
  const ImageDataset train = testing::SyntheticImages(16, spec, 1);
  spec.side = 64;
  JudgeOptions o = Quick();
  o.classes = 8;
  const absl::Status other = TrainJudge(CpuBackend(), train, testing::SyntheticImages(8, spec, 2), "s", o).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(other.message()), HasSubstr("3x64x64"));
  o.classes = 4;  // the set has labels up to 7
  const absl::Status labels = TrainJudge(CpuBackend(), train, train, "s", o).status();
  EXPECT_EQ(labels.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(labels.message()), HasSubstr("is not one of the 4 classes"));
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

// The version-1 file of SeededMnistJudge() as the code before judge shapes wrote it.
constexpr size_t kVersionOneSize = 490613;
constexpr uint32_t kVersionOneCrc = 0x48674bc7;

// An untrained MNIST-shaped judge with fixed statistics: what the format tests encode.
Judge SeededMnistJudge() {
  Judge judge;
  judge.Initialize(7);
  judge.dataset = "mnist";
  judge.test_accuracy = 0.9857;
  judge.test_features.dim = kJudgeFeatures;
  judge.test_features.count = 10000;
  for (int64_t i = 0; i < kJudgeFeatures; ++i) judge.test_features.mean.push_back(0.25 * static_cast<double>(i));
  for (int64_t i = 0; i < kJudgeFeatures * kJudgeFeatures; ++i) {
    judge.test_features.covariance.push_back(i % (kJudgeFeatures + 1) == 0 ? 1.5 : 0.0);
  }
  return judge;
}

// The bytes of a version-1 file as the judge store wrote them before judges took other
// shapes: written here field by field, independently of EncodeJudge.
std::vector<uint8_t> VersionOneBytes(const Judge& judge) {
  ByteWriter w;
  w.Raw("GANTRYJG", 8);
  w.U32(1);
  w.String(judge.dataset);
  w.F64(judge.test_accuracy);
  const Tensor& p = judge.params().params();
  w.Floats({p.data(), static_cast<size_t>(p.numel())});
  w.I64(judge.test_features.dim);
  w.I64(judge.test_features.count);
  w.Doubles(judge.test_features.mean);
  w.Doubles(judge.test_features.covariance);
  std::vector<uint8_t> bytes = w.Take();
  const uint32_t crc = Crc32c(bytes);
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  bytes.insert(bytes.end(), c, c + 4);
  return bytes;
}

TEST(JudgeStore, AnMnistJudgeIsTheVersionOneFileByteForByte) {
  const Judge judge = SeededMnistJudge();
  const std::vector<uint8_t> bytes = EncodeJudge(judge);
  EXPECT_EQ(bytes, VersionOneBytes(judge));
  // The size and CRC-32C of this file as the code before judge shapes (commit 49bb701)
  // wrote it: the same network, initialised from the same seed, in the same format.
  EXPECT_EQ(bytes.size(), kVersionOneSize);
  EXPECT_EQ(Crc32c(bytes), kVersionOneCrc);
}

TEST(JudgeStore, ReadsAVersionOneFileAsTheMnistShape) {
  const Judge judge = SeededMnistJudge();
  absl::StatusOr<std::unique_ptr<Judge>> back = DecodeJudge(VersionOneBytes(judge), "old.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->shape(), JudgeShape{});
  EXPECT_EQ((*back)->dataset, "mnist");
  EXPECT_EQ((*back)->test_features, judge.test_features);
  EXPECT_EQ(EncodeJudge(**back), VersionOneBytes(judge));
}

TEST(JudgeStore, AShapedJudgeRecordsItsShapeAsVersionTwo) {
  Judge judge({.channels = 3, .side = 64, .classes = 12});
  judge.Initialize(3);
  judge.dataset = "shapes";
  judge.test_accuracy = 0.75;
  judge.test_features = SeededMnistJudge().test_features;
  const std::vector<uint8_t> bytes = EncodeJudge(judge);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, 2u);
  absl::StatusOr<std::unique_ptr<Judge>> back = DecodeJudge(bytes, "shaped.bin");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->shape(), judge.shape());
  EXPECT_EQ(EncodeJudge(**back), bytes);

  // A file whose recorded shape no judge has (its CRC right) is refused as damaged.
  std::vector<uint8_t> odd(bytes.begin(), bytes.end() - 4);
  const int64_t classes = 1;
  std::memcpy(odd.data() + 12 + 16, &classes, 8);  // channels, side, then classes
  const uint32_t crc = Crc32c(odd);
  const auto* c = reinterpret_cast<const uint8_t*>(&crc);
  odd.insert(odd.end(), c, c + 4);
  const absl::Status refused = DecodeJudge(odd, "odd.bin").status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("odd.bin: records a judge of 3x64x64 images, 1 classes"));
}

TEST(JudgeStore, FindRefusesAJudgeOfAnotherShapeNamingBoth) {
  const std::string root = ::testing::TempDir() + "/judge_shapes";
  fs::remove_all(root);
  fs::create_directories(root);
  Judge judge({.channels = 3, .side = 32, .classes = 12});
  judge.Initialize(3);
  judge.dataset = "shapes";
  judge.test_features = SeededMnistJudge().test_features;
  ASSERT_TRUE(SaveJudge(judge, root).ok());
  EXPECT_TRUE(FindJudge("shapes", root, {.channels = 3, .side = 32, .classes = 12}).ok());
  const absl::Status other = FindJudge("shapes", root, {.channels = 3, .side = 64, .classes = 12}).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(other.message()),
              HasSubstr("a judge of 3x32x32 images, 12 classes, this run's are 3x64x64 images, 12 classes"));
  EXPECT_THAT(std::string(other.message()), HasSubstr("train-judge --dataset shapes --retrain"));
  EXPECT_EQ(FindJudge("shapes", root, {.channels = 3, .side = 32, .classes = 10}).status().code(),
            absl::StatusCode::kFailedPrecondition);
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

  EXPECT_EQ(FindJudge("mnist", root + "/data", JudgeShape{}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(FindJudge("mnist", root + "/data", JudgeShape{}).status().message()),
              HasSubstr("gantry-worker train-judge --dataset mnist"));
  absl::StatusOr<std::string> saved = SaveJudge(**judge, root + "/data");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(*saved, root + "/data/gantry-judge-mnist.bin");
  auto found = FindJudge("mnist", root + "/data", JudgeShape{});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->second, *saved);
  EXPECT_EQ(FindJudge("fashion-mnist", root + "/data", JudgeShape{}).status().code(), absl::StatusCode::kNotFound);

  // A data folder that cannot be written to (here: below a regular file, which even root
  // cannot create a folder in): the cache folder instead.
  ASSERT_TRUE(WriteFileAtomically(root + "/plain_file", "x").ok());
  const std::string read_only = root + "/plain_file/data";
  saved = SaveJudge(**judge, read_only);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->rfind(root + "/cache/gantry/judge-mnist-", 0), 0u) << *saved;
  found = FindJudge("mnist", read_only, JudgeShape{});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->second, *saved);
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace gantry
