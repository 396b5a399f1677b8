// Time to quality read off a sweep's epoch rows: the crossing interpolated between scored
// epochs, an upper bound when the first score already meets it, "never" otherwise.
#include "report/time_to_target.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

EpochRow Scored(int64_t batch, int64_t epoch, int64_t steps, double seconds, double fd) {
  EpochRow r;
  r.batch_size = batch;
  r.epoch = epoch;
  r.steps = steps;
  r.seconds = seconds;
  r.quality_fd = fd;
  return r;
}

TEST(TimeToTarget, InterpolatesBetweenScoredEpochs) {
  // Batch 64: FD 300 after epoch 1 (10 s, 100 steps), 100 after epoch 2 (another 10 s):
  // 200 is crossed half way through epoch 2.
  const std::vector<EpochRow> rows = {Scored(64, 1, 100, 10, 300), Scored(64, 2, 100, 10, 100)};
  const std::vector<TimeToTarget> t = TimesToTarget(rows, {TargetMetric::kFrechetDistance, 200});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].reached);
  EXPECT_FALSE(t[0].upper_bound);
  EXPECT_EQ(t[0].epoch, 2);
  EXPECT_DOUBLE_EQ(t[0].seconds, 15);
  EXPECT_DOUBLE_EQ(t[0].steps, 150);
  EXPECT_DOUBLE_EQ(t[0].samples, 150 * 64);
  EXPECT_DOUBLE_EQ(t[0].best, 100);
}

TEST(TimeToTarget, UnscoredEpochsCountTowardsTimeButNotAsPoints) {
  // Epoch 2 unscored (-1): the crossing lies between epochs 1 and 3's ends.
  const std::vector<EpochRow> rows = {Scored(64, 1, 10, 10, 400), Scored(64, 2, 10, 10, -1),
                                      Scored(64, 3, 10, 10, 200)};
  const std::vector<TimeToTarget> t = TimesToTarget(rows, {TargetMetric::kFrechetDistance, 300});
  ASSERT_TRUE(t[0].reached);
  EXPECT_DOUBLE_EQ(t[0].seconds, 20);  // half way from 10 s to 30 s
  EXPECT_EQ(t[0].scored_epochs, 2);
}

TEST(TimeToTarget, FirstScoreAtTheTargetIsAnUpperBoundAndMissesSayNever) {
  const std::vector<EpochRow> rows = {Scored(512, 1, 10, 5, 90), Scored(64, 1, 100, 20, 150),
                                      Scored(64, 2, 100, 20, 120)};
  const std::vector<TimeToTarget> t = TimesToTarget(rows, {TargetMetric::kFrechetDistance, 100});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].batch_size, 64);
  EXPECT_FALSE(t[0].reached);
  EXPECT_DOUBLE_EQ(t[0].best, 120);
  EXPECT_EQ(t[1].batch_size, 512);
  EXPECT_TRUE(t[1].reached);
  EXPECT_TRUE(t[1].upper_bound);
  EXPECT_DOUBLE_EQ(t[1].seconds, 5);
  const std::string md = TimeToTargetMarkdown(rows, {TargetMetric::kFrechetDistance, 100});
  EXPECT_THAT(md, HasSubstr("| 64 | never (2 scored epochs) | - | - | - | - | 120 |"));
  EXPECT_THAT(md, HasSubstr("| 512 | epoch 1 (by) | 5.0 | 5120 | 10 | - | 90 |"));
}

TEST(TimeToTarget, ComparesSamplesWithTheSmallestBatch) {
  const std::vector<EpochRow> rows = {Scored(64, 1, 100, 10, 50), Scored(256, 1, 50, 4, 300),
                                      Scored(256, 2, 50, 4, 50)};
  const std::string md = TimeToTargetMarkdown(rows, {TargetMetric::kFrechetDistance, 60});
  EXPECT_THAT(md, HasSubstr("| 64 | epoch 1 (by) | 10.0 | 6400 | 100 | 1.00x |"));
  // 256: crossing at 240/250 of epoch 2: 50 + 48 steps = 98 steps, 25088 samples, 3.92x.
  EXPECT_THAT(md, HasSubstr("| 256 | epoch 2 | 7.8 | 25088 | 98 | 3.92x |"));
}

TEST(TimeToTarget, FlowUsesTheHeldOutErrorAndNanNeverReaches) {
  EpochRow a = Scored(16, 1, 10, 1, -1), b = Scored(16, 2, 10, 1, -1), c = Scored(16, 3, 10, 1, -1);
  a.val_rel_l2 = 0.4;
  b.val_rel_l2 = std::numeric_limits<double>::quiet_NaN();
  c.val_rel_l2 = 0.1;
  const std::vector<TimeToTarget> t = TimesToTarget({a, b, c}, {TargetMetric::kHeldOutRelL2, 0.2});
  ASSERT_TRUE(t[0].reached);
  EXPECT_EQ(t[0].epoch, 3);
  EXPECT_FALSE(ReachesGoal(b, {TargetMetric::kHeldOutRelL2, 0.2}));
  EXPECT_FALSE(GoalOf(0, 0).has_value());
  EXPECT_EQ(GoalOf(0, 0.2)->metric, TargetMetric::kHeldOutRelL2);
}

}  // namespace
}  // namespace gantry
