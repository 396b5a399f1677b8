#include "worker/eval/flow_validation.h"

#include <cmath>
#include <filesystem>

#include "gtest/gtest.h"
#include "worker/layers/conv2d.h"
#include "worker/optim/flat_parameters.h"

namespace gantry {
namespace {

// A 1x1 conv that copies condition channels 0-2: the "persistence" generator.
struct CopyGenerator {
  CopyGenerator() {
    net.Add(std::make_unique<Conv2d>(4, 3, 1, 1, 0, /*bias=*/true));
    const std::vector<Layer*> layers = net.layers();
    params = std::make_unique<FlatParameters>(layers);
    float* p = params->params().data();
    std::fill(p, p + params->params().numel(), 0.0f);
    for (int o = 0; o < 3; ++o) p[o * 4 + o] = 1.0f;  // weight [3, 4, 1, 1], then bias [3]
  }
  Sequential net;
  std::unique_ptr<FlatParameters> params;
};

ImageDataset Rows(int64_t count, int64_t s) {
  ImageDataset d;
  d.count = count;
  d.channels = 7;
  d.height = d.width = s;
  d.labels.assign(count, 0);
  d.pixels.resize(count * 7 * s * s);
  for (size_t i = 0; i < d.pixels.size(); ++i) d.pixels[i] = std::sin(0.1f * static_cast<float>(i));
  return d;
}

TEST(ScoreNextFrame, PersistenceScoresTheDistanceBetweenConditionAndTarget) {
  CopyGenerator g;
  const ImageDataset rows = Rows(5, 4);
  absl::StatusOr<NextFrameScore> score = ScoreNextFrame(CpuBackend(), g.net, rows, 2);  // batches 2, 2, 1
  ASSERT_TRUE(score.ok()) << score.status();
  double abs_sum = 0, err = 0, ref = 0;
  for (int64_t r = 0; r < 5; ++r) {
    const float* row = rows.pixels.data() + r * 7 * 16;
    for (int64_t k = 0; k < 3 * 16; ++k) {
      const double d = static_cast<double>(row[k]) - row[4 * 16 + k];
      abs_sum += std::abs(d);
      err += d * d;
      ref += static_cast<double>(row[4 * 16 + k]) * row[4 * 16 + k];
    }
  }
  EXPECT_EQ(score->rows, 5);
  EXPECT_NEAR(score->l1, abs_sum / (5 * 3 * 16), 1e-6);
  EXPECT_NEAR(score->relative_l2, std::sqrt(err / ref), 1e-6);
  EXPECT_GT(score->l1, 0.05);  // not trivially zero
  // The copying generator IS persistence: the baseline columns equal its scores.
  EXPECT_NEAR(score->persistence_l1, score->l1, 1e-6);
  EXPECT_NEAR(score->persistence_relative_l2, score->relative_l2, 1e-6);
}

TEST(ScoreNextFrame, PersistenceIsScoredBesideAGeneratorThatIsNotPersistence) {
  CopyGenerator g;
  g.params->params().data()[0] = 0.5f;  // channel 0 now half the input's
  const ImageDataset rows = Rows(3, 4);
  absl::StatusOr<NextFrameScore> score = ScoreNextFrame(CpuBackend(), g.net, rows, 2);
  ASSERT_TRUE(score.ok()) << score.status();
  double abs_sum = 0;
  for (int64_t r = 0; r < 3; ++r) {
    const float* row = rows.pixels.data() + r * 7 * 16;
    for (int64_t k = 0; k < 3 * 16; ++k) abs_sum += std::abs(static_cast<double>(row[k]) - row[4 * 16 + k]);
  }
  EXPECT_NEAR(score->persistence_l1, abs_sum / (3 * 3 * 16), 1e-6);
  EXPECT_NE(score->l1, score->persistence_l1);
}

TEST(WriteNextFrameSamples, WritesThePictureAndThePredictions) {
  CopyGenerator g;
  const ImageDataset rows = Rows(3, 4);
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(WriteNextFrameSamples(CpuBackend(), g.net, rows, 8, dir + "/s.png", dir + "/s.npy").ok());
  EXPECT_GT(std::filesystem::file_size(dir + "/s.png"), 40u);
  EXPECT_EQ(std::filesystem::file_size(dir + "/s.npy"), 128u + 3 * 3 * 16 * 4);
  ImageDataset wrong = rows;
  wrong.channels = 1;
  EXPECT_FALSE(ScoreNextFrame(CpuBackend(), g.net, wrong).ok());
}

}  // namespace
}  // namespace gantry
