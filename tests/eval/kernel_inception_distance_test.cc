#include "worker/eval/kernel_inception_distance.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> GaussianRows(int64_t n, int64_t dim, uint64_t seed, double mean, double scale) {
  Rng rng(seed);
  std::vector<float> rows(static_cast<size_t>(n * dim));
  for (float& v : rows) v = static_cast<float>(mean + scale * rng.Normal());
  return rows;
}

KidOptions Kid(int64_t subsets, int64_t subset_size = 1000, uint64_t seed = 1) {
  KidOptions options;
  options.subsets = subsets;
  options.subset_size = subset_size;
  options.seed = seed;
  return options;
}

double Kernel(const float* a, const float* b, int64_t dim) {
  double dot = 0;
  for (int64_t d = 0; d < dim; ++d) dot += static_cast<double>(a[d]) * static_cast<double>(b[d]);
  return std::pow(dot / static_cast<double>(dim) + 1.0, 3);
}

// The estimate written out term by term, in double, for one subset: the reference's
// formula with nothing shared with the implementation but the subset's rows.
double StraightforwardMmd2(const std::vector<float>& x, const std::vector<float>& y, int64_t dim,
                           const KidSubset& s) {
  const int64_t m = static_cast<int64_t>(s.x.size());
  double xx = 0, yy = 0, xy = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      if (i != j) xx += Kernel(&x[s.x[i] * dim], &x[s.x[j] * dim], dim);
      if (i != j) yy += Kernel(&y[s.y[i] * dim], &y[s.y[j] * dim], dim);
      xy += Kernel(&x[s.x[i] * dim], &y[s.y[j] * dim], dim);
    }
  }
  const double md = static_cast<double>(m);
  return (xx + yy) / (md * (md - 1)) - 2 * xy / (md * md);
}

TEST(KernelInceptionDistance, MatchesAStraightforwardDoubleImplementationSubsetBySubset) {
  const int64_t dim = 7;
  const std::vector<float> x = GaussianRows(40, dim, 1, 0.2, 1.0), y = GaussianRows(31, dim, 2, 0.5, 0.8);
  for (const KidOptions& options : {Kid(6, 12, 3), Kid(3, 1000, 4)}) {
    const std::vector<KidSubset> subsets = DrawKidSubsets(40, 31, options);
    std::vector<double> mmd;
    for (const KidSubset& s : subsets) mmd.push_back(StraightforwardMmd2(x, y, dim, s));
    double mean = 0, var = 0;
    for (double v : mmd) mean += v / static_cast<double>(mmd.size());
    for (double v : mmd) var += (v - mean) * (v - mean) / static_cast<double>(mmd.size());
    const KidEstimate e = KernelInceptionDistance(x.data(), 40, y.data(), 31, dim, options);
    EXPECT_EQ(e.subset_size, std::min<int64_t>(options.subset_size, 31));
    EXPECT_EQ(e.subsets, options.subsets);
    EXPECT_NEAR(e.kid, mean, 1e-12 * (1 + std::abs(mean))) << "subset size " << options.subset_size;
    EXPECT_NEAR(e.std, std::sqrt(var), 1e-9 * (1 + std::sqrt(var)));
    EXPECT_GT(e.kid, 0.01);  // the sets differ in mean and scale
  }
}

TEST(KernelInceptionDistance, SubsetsAreDistinctRowsOfTheSmallerSize) {
  const std::vector<KidSubset> subsets = DrawKidSubsets(50, 20, Kid(5, 30, 9));
  ASSERT_EQ(subsets.size(), 5u);
  for (const KidSubset& s : subsets) {
    ASSERT_EQ(s.x.size(), 20u);
    ASSERT_EQ(s.y.size(), 20u);
    EXPECT_EQ(std::set<int64_t>(s.x.begin(), s.x.end()).size(), 20u);
    EXPECT_EQ(std::set<int64_t>(s.y.begin(), s.y.end()).size(), 20u);
    EXPECT_LT(*std::max_element(s.x.begin(), s.x.end()), 50);
    EXPECT_GE(*std::min_element(s.x.begin(), s.x.end()), 0);
  }
  EXPECT_NE(subsets[0].x, subsets[1].x);  // fresh draws per subset
  // The same seed draws the same subsets; another seed others.
  const std::vector<KidSubset> again = DrawKidSubsets(50, 20, Kid(5, 30, 9));
  EXPECT_EQ(again[4].x, subsets[4].x);
  EXPECT_NE(DrawKidSubsets(50, 20, Kid(5, 30, 10))[0].x, subsets[0].x);
}

TEST(KernelInceptionDistance, OfWholeEqualSetsIsTheSameForEverySubset) {
  // m = n on both sides: every subset is the whole of both sets in some order, so every
  // subset's estimate is the same (computed once), and the spread is 0.
  const std::vector<float> x = GaussianRows(25, 5, 5, 0, 1), y = GaussianRows(25, 5, 6, 0, 1);
  const KidEstimate e = KernelInceptionDistance(x.data(), 25, y.data(), 25, 5, Kid(7));
  EXPECT_EQ(e.subset_size, 25);
  EXPECT_EQ(e.subsets, 7);
  EXPECT_EQ(e.std, 0.0);
  for (const KidSubset& s : DrawKidSubsets(25, 25, Kid(7))) {
    EXPECT_NEAR(e.kid, StraightforwardMmd2(x, y, 5, s), 1e-12);
  }
}

TEST(KernelInceptionDistance, IsUnbiasedAcrossSamplesOfOneDistribution) {
  // Pairs of independent samples of one distribution: the estimates scatter around 0,
  // some below it, and their mean is 0 within its standard error. A shifted
  // distribution scores far above that scatter.
  const int64_t trials = 300, n = 40, dim = 6;
  std::vector<double> kid;
  for (int64_t t = 0; t < trials; ++t) {
    const std::vector<float> x = GaussianRows(n, dim, 1000 + 2 * t, 0.3, 1.0);
    const std::vector<float> y = GaussianRows(n, dim, 1001 + 2 * t, 0.3, 1.0);
    kid.push_back(KernelInceptionDistance(x.data(), n, y.data(), n, dim, Kid(1)).kid);
  }
  double mean = 0, var = 0;
  for (double v : kid) mean += v / trials;
  for (double v : kid) var += (v - mean) * (v - mean) / (trials - 1);
  const double standard_error = std::sqrt(var / trials);
  EXPECT_LT(std::abs(mean), 4 * standard_error) << "mean " << mean << ", standard error " << standard_error;
  const int64_t negative = std::count_if(kid.begin(), kid.end(), [](double v) { return v < 0; });
  EXPECT_GT(negative, trials / 5) << "an unbiased estimate of 0 is often below it";
  const std::vector<float> x = GaussianRows(n, dim, 7, 0.3, 1.0), shifted = GaussianRows(n, dim, 8, 1.3, 1.0);
  EXPECT_GT(KernelInceptionDistance(x.data(), n, shifted.data(), n, dim, Kid(1)).kid,
            10 * std::sqrt(var));
}

TEST(KernelInceptionDistance, IsDeterministicBitForBit) {
  const std::vector<float> x = GaussianRows(300, 16, 11, 0.1, 1.0), y = GaussianRows(280, 16, 12, 0.2, 1.1);
  const KidOptions options = Kid(20, 100, 5);
  const KidEstimate a = KernelInceptionDistance(x.data(), 300, y.data(), 280, 16, options);
  const KidEstimate b = KernelInceptionDistance(x.data(), 300, y.data(), 280, 16, options);
  EXPECT_EQ(a.kid, b.kid);
  EXPECT_EQ(a.std, b.std);
  // Another seed draws other subsets: another estimate of the same quantity.
  const KidEstimate c = KernelInceptionDistance(x.data(), 300, y.data(), 280, 16, Kid(20, 100, 6));
  EXPECT_NE(a.kid, c.kid);
  EXPECT_NEAR(a.kid, c.kid, 4 * a.std);
}

// tests/golden/kid: KID computed by PyTorch in float64 with the reference's formula on
// the same rows and the same subsets (scripts/make_goldens.py redraws gantry's Rng).
TEST(KernelInceptionDistance, MatchesThePyTorchGolden) {
  const Tensor x = testing::LoadGolden("kid", "x.npy"), y = testing::LoadGolden("kid", "y.npy");
  const Tensor cases = testing::LoadGolden("kid", "cases.npy");  // rows: subsets, subset size, seed
  const Tensor expected = testing::LoadGolden("kid", "kid.npy");  // rows: kid, std
  ASSERT_EQ(x.dim(1), y.dim(1));
  ASSERT_EQ(cases.dim(0), expected.dim(0));
  for (int64_t c = 0; c < cases.dim(0); ++c) {
    const KidOptions options = Kid(static_cast<int64_t>(cases.at(c * 3)), static_cast<int64_t>(cases.at(c * 3 + 1)),
                                   static_cast<uint64_t>(cases.at(c * 3 + 2)));
    const KidEstimate e = KernelInceptionDistance(x.data(), x.dim(0), y.data(), y.dim(0), x.dim(1), options);
    const double kid = expected.at(c * 2), std = expected.at(c * 2 + 1);
    EXPECT_NEAR(e.kid, kid, 1e-6 * std::abs(kid)) << "case " << c;
    EXPECT_NEAR(e.std, std, 1e-5 * std::abs(std) + 1e-12) << "case " << c;
  }
}

}  // namespace
}  // namespace gantry
