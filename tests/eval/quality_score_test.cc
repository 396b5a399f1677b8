#include "worker/eval/quality_score.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Gaussian(int64_t n, int64_t dim, uint64_t seed, const std::vector<double>& scale) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(n * dim));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dim; ++d) x[i * dim + d] = static_cast<float>(rng.Normal() * scale[d]);
  }
  return x;
}

TEST(FrechetDistance, OfIdenticalFeatureSetsIsZero) {
  const std::vector<float> x = Gaussian(500, 8, 1, std::vector<double>(8, 1.5));
  const FeatureStats s = ComputeFeatureStats(x.data(), 500, 8);
  EXPECT_NEAR(FrechetDistance(s, s), 0.0, 1e-9);
}

TEST(FrechetDistance, OfAShiftedCopyIsTheSquaredShift) {
  // Same covariance, so the trace term vanishes and only ||shift||^2 is left.
  const int64_t n = 400, dim = 6;
  std::vector<float> x = Gaussian(n, dim, 2, {1, 2, 0.5, 1, 3, 1});
  std::vector<float> y = x;
  const std::vector<double> shift = {1, -2, 0.5, 0, 0, 3};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dim; ++d) y[i * dim + d] += static_cast<float>(shift[d]);
  }
  const double expected = 1 + 4 + 0.25 + 9;
  EXPECT_NEAR(FrechetDistance(ComputeFeatureStats(x.data(), n, dim), ComputeFeatureStats(y.data(), n, dim)), expected,
              1e-3);
}

TEST(FrechetDistance, MatchesTheClosedFormOfDiagonalGaussians) {
  // d^2 = ||m_a - m_b||^2 + sum_i (sqrt(a_i) - sqrt(b_i))^2 for diagonal covariances.
  FeatureStats a{.dim = 3, .count = 10, .mean = {0, 1, 2}, .covariance = {4, 0, 0, 0, 1, 0, 0, 0, 9}};
  FeatureStats b{.dim = 3, .count = 10, .mean = {1, 1, 0}, .covariance = {1, 0, 0, 0, 1, 0, 0, 0, 0.25}};
  const double expected = (1 + 0 + 4) + (1 + 0 + 2.5 * 2.5);
  EXPECT_NEAR(FrechetDistance(a, b), expected, 1e-9);
  EXPECT_NEAR(FrechetDistance(b, a), expected, 1e-9);
}

TEST(FrechetDistance, MatchesTheClosedFormOfRotatedGaussians) {
  // C_b = R C_a R^T with R a rotation: with C_a = diag(4, 1) and a 90-degree turn,
  // C_b = diag(1, 4) and Tr(sqrt(C_a^1/2 C_b C_a^1/2)) = Tr(diag(2, 2)) = 4.
  FeatureStats a{.dim = 2, .count = 10, .mean = {0, 0}, .covariance = {4, 0, 0, 1}};
  FeatureStats b{.dim = 2, .count = 10, .mean = {0, 0}, .covariance = {1, 0, 0, 4}};
  EXPECT_NEAR(FrechetDistance(a, b), 5 + 5 - 2 * 4, 1e-9);
}

TEST(FeatureStats, AreTheSampleMeanAndUnbiasedCovariance) {
  const std::vector<float> x = {1, 2, 3, 6};  // two rows of two
  const FeatureStats s = ComputeFeatureStats(x.data(), 2, 2);
  EXPECT_EQ(s.mean, (std::vector<double>{2, 4}));
  EXPECT_EQ(s.covariance, (std::vector<double>{2, 4, 4, 8}));
}

TEST(ClassScores, UniformAndConfidentPredictions) {
  const std::vector<float> uniform(3 * 10, 0.1f);
  const ClassScores u = ScoreClasses(uniform, 3, 10);
  EXPECT_NEAR(u.mean_entropy, std::log(10.0), 1e-6);
  EXPECT_NEAR(u.marginal_entropy, std::log(10.0), 1e-6);
  EXPECT_NEAR(u.mean_confidence, 0.1, 1e-6);
  // Four images, each certain of a different class: confident and diverse.
  std::vector<float> onehot(4 * 10, 0.0f);
  for (int i = 0; i < 4; ++i) onehot[i * 10 + i] = 1.0f;
  const ClassScores c = ScoreClasses(onehot, 4, 10);
  EXPECT_NEAR(c.mean_entropy, 0.0, 1e-9);
  EXPECT_NEAR(c.marginal_entropy, std::log(4.0), 1e-6);
  EXPECT_NEAR(c.mean_confidence, 1.0, 1e-9);
  // Mode collapse: all certain of the same class.
  std::vector<float> collapsed(4 * 10, 0.0f);
  for (int i = 0; i < 4; ++i) collapsed[i * 10 + 7] = 1.0f;
  EXPECT_NEAR(ScoreClasses(collapsed, 4, 10).marginal_entropy, 0.0, 1e-9);
}

TEST(ClassScores, SoftmaxRowsSumToOne) {
  std::vector<float> logits = {0, 0, 1000, 1, 2, 3};
  SoftmaxRows(logits, 2, 3);
  EXPECT_NEAR(logits[2], 1.0, 1e-6);
  EXPECT_NEAR(logits[3] + logits[4] + logits[5], 1.0, 1e-6);
  EXPECT_GT(logits[5], logits[4]);
}

}  // namespace
}  // namespace gantry
