#include "common/batch_shares.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

int64_t Sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(EvenShares, SplitsExactlyWhenDivisible) {
  EXPECT_THAT(EvenShares(64, 4), ElementsAre(16, 16, 16, 16));
  EXPECT_THAT(EvenShares(7, 1), ElementsAre(7));
}

TEST(EvenShares, GivesTheRemainderToTheFirstRanks) {
  EXPECT_THAT(EvenShares(10, 4), ElementsAre(3, 3, 2, 2));
  EXPECT_THAT(EvenShares(65, 4), ElementsAre(17, 16, 16, 16));
  EXPECT_THAT(EvenShares(3, 3), ElementsAre(1, 1, 1));
}

TEST(EvenSharesDeathTest, RequiresOneSamplePerRank) {
  EXPECT_DEATH(EvenShares(3, 4), "at least one sample");
  EXPECT_DEATH(EvenShares(8, 0), "world_size");
}

TEST(ProportionalShares, EqualThroughputMatchesEvenShares) {
  for (int64_t batch : {4, 10, 64, 65, 511}) {
    auto shares = ProportionalShares(batch, {5.0, 5.0, 5.0, 5.0});
    ASSERT_TRUE(shares.ok()) << shares.status();
    EXPECT_EQ(*shares, EvenShares(batch, 4)) << "batch " << batch;
  }
}

TEST(ProportionalShares, FollowsThroughputAndSumsExactly) {
  auto shares = ProportionalShares(64, {200.0, 100.0});
  ASSERT_TRUE(shares.ok()) << shares.status();
  EXPECT_THAT(*shares, ElementsAre(43, 21));  // ideal 42.67, 21.33

  shares = ProportionalShares(100, {1.0, 2.0, 3.0, 4.0});
  ASSERT_TRUE(shares.ok()) << shares.status();
  EXPECT_THAT(*shares, ElementsAre(10, 20, 30, 40));
}

TEST(ProportionalShares, LargestRemaindersGetTheLeftover) {
  // Ideal 3.33, 3.33, 3.33: one leftover sample, ties go to the lower rank.
  auto shares = ProportionalShares(10, {1.0, 1.0, 1.0});
  ASSERT_TRUE(shares.ok());
  EXPECT_THAT(*shares, ElementsAre(4, 3, 3));
  // Ideal 1.43, 2.86, 5.71 (floors 1, 2, 5): the two leftovers go to remainders .86 and .71.
  shares = ProportionalShares(10, {1.0, 2.0, 4.0});
  ASSERT_TRUE(shares.ok());
  EXPECT_THAT(*shares, ElementsAre(1, 3, 6));
}

TEST(ProportionalShares, PinsSlowRanksAtMinShare) {
  // Rank 0 would get 0.099 samples: it is pinned at 1 and the rest split 1:1.
  auto shares = ProportionalShares(10, {1.0, 50.0, 50.0});
  ASSERT_TRUE(shares.ok());
  EXPECT_THAT(*shares, ElementsAre(1, 5, 4));

  // Ideal 1, 4, 15: pinning rank 0 at 4 lowers rank 1's share to 16 * 4/19 = 3.4, so it
  // is pinned in a second round.
  shares = ProportionalShares(20, {1.0, 4.0, 15.0}, 4);
  ASSERT_TRUE(shares.ok());
  EXPECT_THAT(*shares, ElementsAre(4, 4, 12));

  shares = ProportionalShares(12, {1.0, 1e6, 1.0}, 4);
  ASSERT_TRUE(shares.ok());
  EXPECT_THAT(*shares, ElementsAre(4, 4, 4));
}

TEST(ProportionalShares, SumsExactlyOverManyInputs) {
  for (int64_t batch = 8; batch <= 300; batch += 7) {
    std::vector<double> throughput;
    for (int r = 0; r < 8; ++r) throughput.push_back(1.0 + 0.37 * r * r + (batch % (r + 2)));
    auto shares = ProportionalShares(batch, throughput, 1);
    ASSERT_TRUE(shares.ok()) << shares.status();
    EXPECT_EQ(Sum(*shares), batch);
    const double total = std::accumulate(throughput.begin(), throughput.end(), 0.0);
    std::vector<double> ideal;
    for (double t : throughput) ideal.push_back(static_cast<double>(batch) * t / total);
    const bool none_pinned = *std::min_element(ideal.begin(), ideal.end()) >= 1.0;
    for (size_t r = 0; r < shares->size(); ++r) {
      EXPECT_GE((*shares)[r], 1);
      // With nothing pinned, largest remainder stays within one sample of the ideal.
      if (none_pinned) {
        EXPECT_LT(std::abs(static_cast<double>((*shares)[r]) - ideal[r]), 1.0);
      }
    }
  }
}

TEST(ProportionalShares, RejectsBadInputsByName) {
  auto bad = ProportionalShares(64, {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("no per-rank throughput"));

  bad = ProportionalShares(64, {1.0, 0.0});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("rank 1"));

  bad = ProportionalShares(64, {1.0, -2.0});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("rank 1"));

  bad = ProportionalShares(64, {std::nan(""), 1.0});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("rank 0"));

  bad = ProportionalShares(64, {1.0, std::numeric_limits<double>::infinity()});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("rank 1"));

  bad = ProportionalShares(7, {1.0, 1.0, 1.0, 1.0}, 2);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("global batch 7"));

  bad = ProportionalShares(8, {1.0, 1.0}, 0);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("min_share 0"));

  EXPECT_TRUE(ProportionalShares(8, {1.0, 1.0, 1.0, 1.0}, 2).ok());
}

TEST(ShareRanges, TilesTheBatchInRankOrder) {
  EXPECT_THAT(ShareRanges({3, 3, 2, 2}),
              ElementsAre(RowRange{0, 3}, RowRange{3, 6}, RowRange{6, 8}, RowRange{8, 10}));
  EXPECT_THAT(ShareRanges({43, 21}), ElementsAre(RowRange{0, 43}, RowRange{43, 64}));
  EXPECT_TRUE(ShareRanges({}).empty());
}

TEST(ShareRanges, EverySampleBelongsToExactlyOneRank) {
  const std::vector<int64_t> shares = {5, 1, 9, 2, 7};
  const std::vector<RowRange> ranges = ShareRanges(shares);
  std::vector<int> owners(static_cast<size_t>(Sum(shares)), 0);
  for (size_t r = 0; r < ranges.size(); ++r) {
    EXPECT_EQ(ranges[r].size(), shares[r]);
    for (int64_t row = ranges[r].begin; row < ranges[r].end; ++row) ++owners[static_cast<size_t>(row)];
  }
  for (int count : owners) EXPECT_EQ(count, 1);
}

TEST(GradientWeights, AreSharesOverTheBatchAndSumToOne) {
  EXPECT_THAT(GradientWeights({16, 16, 16, 16}), ElementsAre(0.25, 0.25, 0.25, 0.25));
  const std::vector<double> w = GradientWeights({43, 21});
  EXPECT_THAT(w, ElementsAre(DoubleNear(43.0 / 64, 1e-15), DoubleNear(21.0 / 64, 1e-15)));
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-15);
}

TEST(GradientWeights, WeightedLocalMeansEqualTheGlobalMean) {
  // Per-sample "gradients" 0..9 split unevenly: sum of weight_r × local mean_r is the mean.
  const std::vector<int64_t> shares = {5, 3, 2};
  const std::vector<double> weights = GradientWeights(shares);
  const std::vector<RowRange> ranges = ShareRanges(shares);
  double reduced = 0;
  for (size_t r = 0; r < shares.size(); ++r) {
    double local_sum = 0;
    for (int64_t row = ranges[r].begin; row < ranges[r].end; ++row) local_sum += static_cast<double>(row);
    reduced += weights[r] * local_sum / static_cast<double>(ranges[r].size());
  }
  EXPECT_NEAR(reduced, 4.5, 1e-12);
}

TEST(GradientWeightsDeathTest, RejectsAnEmptyBatch) {
  EXPECT_DEATH(GradientWeights({0, 0}), "total");
  EXPECT_DEATH(GradientWeights({3, -1}), "share");
}

}  // namespace
}  // namespace gantry
