#include "worker/data/batch_sampler.h"

#include <algorithm>
#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

bool IsPermutation(std::vector<int64_t> order, int64_t n) {
  std::sort(order.begin(), order.end());
  std::vector<int64_t> identity(static_cast<size_t>(n));
  std::iota(identity.begin(), identity.end(), 0);
  return order == identity;
}

TEST(EpochSampler, GivesAPermutation) {
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    const EpochSampler sampler(n, 123);
    for (int64_t epoch : {0, 1, 5}) {
      EXPECT_TRUE(IsPermutation(sampler.Permutation(epoch), n)) << n << " " << epoch;
    }
  }
}

TEST(EpochSampler, DeterministicAcrossInstances) {
  const EpochSampler a(500, 42);
  const EpochSampler b(500, 42);
  EXPECT_EQ(a.Permutation(3), b.Permutation(3));
  EXPECT_NE(a.Permutation(3), EpochSampler(500, 43).Permutation(3));
}

// Pins the exact order, so a change to the shuffle (which would silently change every
// run's data order and break resuming old checkpoints) is noticed.
TEST(EpochSampler, OrderIsPinned) {
  EXPECT_THAT(EpochSampler(10, 7).Permutation(0), ::testing::ElementsAre(3, 0, 2, 1, 7, 5, 9, 4, 6, 8));
  EXPECT_THAT(EpochSampler(10, 7).Permutation(1), ::testing::ElementsAre(4, 0, 3, 6, 1, 8, 9, 2, 7, 5));
}

TEST(EpochSampler, DiffersBetweenEpochsAndShuffles) {
  const EpochSampler sampler(1000, 9);
  const std::vector<int64_t> e0 = sampler.Permutation(0);
  const std::vector<int64_t> e1 = sampler.Permutation(1);
  EXPECT_NE(e0, e1);
  // A real shuffle moves almost everything (expected fixed points: 1).
  int fixed = 0;
  for (int64_t i = 0; i < 1000; ++i) fixed += e0[i] == i;
  EXPECT_LT(fixed, 10);
  // Swapping seed and epoch must not give the same stream.
  EXPECT_NE(EpochSampler(1000, 2).Permutation(5), EpochSampler(1000, 5).Permutation(2));
}

TEST(EpochSampler, FirstPositionIsRoughlyUniform) {
  std::vector<int> hits(4, 0);
  for (int64_t epoch = 0; epoch < 4000; ++epoch) ++hits[EpochSampler(4, 1).Permutation(epoch)[0]];
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
}

TEST(StepsPerEpoch, DropsTheIncompleteTail) {
  EXPECT_EQ(StepsPerEpoch(60000, 64), 937);
  EXPECT_EQ(StepsPerEpoch(60000, 512), 117);
  EXPECT_EQ(StepsPerEpoch(128, 64), 2);
  EXPECT_EQ(StepsPerEpoch(63, 64), 0);
  EXPECT_EQ(StepsPerEpoch(0, 8), 0);
}

}  // namespace
}  // namespace gantry
