#include "common/straggler_tracker.h"

#include <algorithm>
#include <numeric>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One step's timings from per-rank compute times in ms; the fast ranks wait in the
// all-reduce for the slowest, as they would in a real synchronous step.
std::vector<StepTiming> Step(const std::vector<double>& compute_ms) {
  const double slowest = *std::max_element(compute_ms.begin(), compute_ms.end());
  std::vector<StepTiming> timings;
  for (double ms : compute_ms) {
    timings.push_back({.data_wait_s = 0.002, .compute_s = ms * 1e-3, .allreduce_wait_s = (slowest - ms) * 1e-3});
  }
  return timings;
}

// Feeds steps first..last with the same per-rank compute times, advancing the clock by
// the step's duration, and returns the events they fired.
std::vector<StragglerEvent> RunSteps(StragglerTracker& tracker, FakeClock& clock, int64_t first, int64_t last,
                                     const std::vector<double>& compute_ms) {
  std::vector<StragglerEvent> events;
  for (int64_t step = first; step <= last; ++step) {
    clock.AdvanceMillis(*std::max_element(compute_ms.begin(), compute_ms.end()));
    tracker.AddStep(step, Step(compute_ms));
    for (const StragglerEvent& e : tracker.TakeNewEvents()) events.push_back(e);
  }
  return events;
}

TEST(StragglerTracker, FlagsASlowRankOncePerWindowWithItsNumbers) {
  FakeClock clock;
  StragglerTracker tracker(4, {.factor = 1.3, .window = 20}, clock);
  std::vector<StragglerEvent> events;
  for (int64_t step = 1; step <= 60; ++step) {
    // Rank 2 is 2x slower (200 ± 10 ms); rank 1 hiccups every third step and rank 3 once,
    // which the window medians must ignore.
    const double rank1 = step % 3 == 0 ? 400.0 : 100.0;
    const double rank2 = step % 2 == 0 ? 210.0 : 190.0;
    const double rank3 = step == 5 ? 2000.0 : 101.0;
    clock.AdvanceMillis(250);
    tracker.AddStep(step, Step({99.0, rank1, rank2, rank3}));
    std::vector<StragglerEvent> fired = tracker.TakeNewEvents();
    if (step < 20) {
      EXPECT_THAT(fired, IsEmpty()) << "step " << step << ": the window is not full yet";
      EXPECT_FALSE(tracker.IsFlagged(2));
    }
    events.insert(events.end(), fired.begin(), fired.end());
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(tracker.flag_count(), 3);
  const int64_t expected_steps[] = {20, 40, 60};
  for (size_t i = 0; i < events.size(); ++i) {
    const StragglerEvent& e = events[i];
    EXPECT_EQ(e.step, expected_steps[i]);
    EXPECT_EQ(e.rank, 2);
    EXPECT_EQ(e.window_steps, 20);
    EXPECT_DOUBLE_EQ(e.rank_compute_ms, 200.0);
    EXPECT_DOUBLE_EQ(e.median_compute_ms, 100.0);  // lower median of 99, 100, 101, 200
    EXPECT_DOUBLE_EQ(e.ratio, 2.0);
    EXPECT_DOUBLE_EQ(e.wall_time_s, 0.25 * static_cast<double>(e.step));
  }
  EXPECT_FALSE(tracker.IsFlagged(0));
  EXPECT_FALSE(tracker.IsFlagged(1));
  EXPECT_TRUE(tracker.IsFlagged(2));
  EXPECT_FALSE(tracker.IsFlagged(3));
  EXPECT_THAT(tracker.TakeNewEvents(), IsEmpty());
}

TEST(StragglerTracker, RecoveryUnflagsAndARelapseFlagsAgain) {
  FakeClock clock;
  StragglerTracker tracker(4, {.factor = 1.3, .window = 20}, clock);
  const std::vector<double> slow = {100, 100, 200, 100};
  const std::vector<double> fast = {100, 100, 100, 100};
  ASSERT_EQ(RunSteps(tracker, clock, 1, 20, slow).size(), 1u);
  // Steps 11..30 are half slow: the median is 150 ms, still 1.5x.
  EXPECT_THAT(RunSteps(tracker, clock, 21, 30, fast), IsEmpty());
  EXPECT_TRUE(tracker.IsFlagged(2));
  // Steps 12..31 are mostly fast.
  EXPECT_THAT(RunSteps(tracker, clock, 31, 31, fast), IsEmpty());
  EXPECT_FALSE(tracker.IsFlagged(2));
  EXPECT_THAT(RunSteps(tracker, clock, 32, 60, fast), IsEmpty());
  // Relapse: flagged once half the window (steps 51..70) is slow again.
  EXPECT_THAT(RunSteps(tracker, clock, 61, 69, slow), IsEmpty());
  EXPECT_FALSE(tracker.IsFlagged(2));
  const std::vector<StragglerEvent> relapse = RunSteps(tracker, clock, 70, 70, slow);
  ASSERT_EQ(relapse.size(), 1u);
  EXPECT_EQ(relapse[0].step, 70);
  EXPECT_DOUBLE_EQ(relapse[0].ratio, 1.5);
  EXPECT_EQ(tracker.flag_count(), 2);
}

TEST(StragglerTracker, AFlappingRankFiresAtMostOncePerWindow) {
  FakeClock clock;
  const int window = 5;
  StragglerTracker tracker(3, {.factor = 1.3, .window = window}, clock);
  // Rank 1 alternates in pairs: its window median crosses the threshold every 2 steps.
  int onsets = 0;
  bool was_flagged = false;
  std::vector<int64_t> event_steps;
  for (int64_t step = 1; step <= 200; ++step) {
    const double rank1 = (step / 2) % 2 == 0 ? 180.0 : 100.0;
    tracker.AddStep(step, Step({100.0, rank1, 100.0}));
    if (tracker.IsFlagged(1) && !was_flagged) ++onsets;
    was_flagged = tracker.IsFlagged(1);
    for (const StragglerEvent& e : tracker.TakeNewEvents()) event_steps.push_back(e.step);
  }
  ASSERT_GT(event_steps.size(), 10u);
  EXPECT_LT(static_cast<int>(event_steps.size()), onsets);
  for (size_t i = 1; i < event_steps.size(); ++i) EXPECT_GE(event_steps[i] - event_steps[i - 1], window);
}

TEST(StragglerTracker, OnlyComputeTimeDecides) {
  FakeClock clock;
  StragglerTracker tracker(3, {}, clock);
  for (int64_t step = 1; step <= 40; ++step) {
    // Rank 0 waits 5x longer on data and rank 2 on the all-reduce; compute is even.
    tracker.AddStep(step, {{.data_wait_s = 0.5, .compute_s = 0.1, .allreduce_wait_s = 0.0},
                           {.data_wait_s = 0.1, .compute_s = 0.1, .allreduce_wait_s = 0.0},
                           {.data_wait_s = 0.1, .compute_s = 0.1, .allreduce_wait_s = 0.5}});
  }
  EXPECT_THAT(tracker.TakeNewEvents(), IsEmpty());
  const StepTiming rank0 = tracker.WindowMedian(0);
  EXPECT_DOUBLE_EQ(rank0.data_wait_s, 0.5);
  EXPECT_DOUBLE_EQ(rank0.compute_s, 0.1);
  EXPECT_DOUBLE_EQ(tracker.WindowMedian(2).allreduce_wait_s, 0.5);
}

TEST(StragglerTracker, ThroughputIsShareOverMedianCompute) {
  FakeClock clock;
  StragglerTracker tracker(2, {.factor = 1.3, .window = 20}, clock);
  RunSteps(tracker, clock, 1, 19, {100, 200});
  EXPECT_THAT(tracker.RankThroughput({32, 32}), IsEmpty());
  RunSteps(tracker, clock, 20, 20, {100, 200});
  EXPECT_THAT(tracker.RankThroughput({32, 32}), ElementsAre(DoubleEq(320.0), DoubleEq(160.0)));
}

TEST(StragglerTracker, ResetWindowForgetsTimingsButKeepsTheCount) {
  FakeClock clock;
  StragglerTracker tracker(2, {.factor = 1.3, .window = 4}, clock);
  ASSERT_EQ(RunSteps(tracker, clock, 1, 4, {100, 200}).size(), 1u);
  tracker.ResetWindow();
  EXPECT_FALSE(tracker.window_full());
  EXPECT_FALSE(tracker.IsFlagged(1));
  EXPECT_THAT(tracker.RankThroughput({2, 2}), IsEmpty());
  EXPECT_THAT(RunSteps(tracker, clock, 5, 8, {100, 100}), IsEmpty());
  EXPECT_THAT(tracker.RankThroughput({2, 2}), ElementsAre(DoubleEq(20.0), DoubleEq(20.0)));
  EXPECT_EQ(tracker.flag_count(), 1);
}

TEST(PlanRebalance, ShiftsSamplesFromASlowRank) {
  FakeClock clock;
  StragglerTracker tracker(2, {.factor = 1.3, .window = 20}, clock);
  const std::vector<int64_t> shares = {32, 32};
  RunSteps(tracker, clock, 1, 19, {100, 200});
  EXPECT_FALSE(PlanRebalance(tracker, shares, 64).has_value()) << "window not full";
  const std::vector<StragglerEvent> events = RunSteps(tracker, clock, 20, 20, {100, 200});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_DOUBLE_EQ(events[0].ratio, 2.0);  // against the faster rank, not the 2-rank mean

  const std::optional<std::vector<int64_t>> plan = PlanRebalance(tracker, shares, 64);
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(*plan, ElementsAre(43, 21));
  // Rank 0 does 43 samples at 320/s, rank 1 21 at 160/s: 134 ms instead of 200 ms.
  const std::vector<double> throughput = tracker.RankThroughput(shares);
  EXPECT_NEAR(PredictedStepSeconds(shares, throughput), 0.200, 1e-9);
  EXPECT_NEAR(PredictedStepSeconds(*plan, throughput), 43.0 / 320.0, 1e-9);
}

TEST(PlanRebalance, LeavesABalancedGroupAlone) {
  FakeClock clock;
  StragglerTracker tracker(4, {.factor = 1.3, .window = 20}, clock);
  const std::vector<int64_t> shares = {64, 64, 64, 64};
  RunSteps(tracker, clock, 1, 20, {100, 100, 100, 100});
  EXPECT_FALSE(PlanRebalance(tracker, shares, 256).has_value());
  EXPECT_FALSE(PlanRebalance(tracker, shares, 256, /*min_share=*/1, /*min_gain=*/0.0).has_value())
      << "the plan would not change";
  // Rank 1 3 % slower: proportional shares 65, 63, 64, 64 predict a step only 1.4 % shorter.
  RunSteps(tracker, clock, 21, 40, {100, 103, 100, 100});
  EXPECT_FALSE(PlanRebalance(tracker, shares, 256).has_value());
  const std::optional<std::vector<int64_t>> eager =
      PlanRebalance(tracker, shares, 256, /*min_share=*/1, /*min_gain=*/0.0);
  ASSERT_TRUE(eager.has_value());
  EXPECT_THAT(*eager, ElementsAre(65, 63, 64, 64));
}

TEST(PlanRebalance, KeepsTheGlobalBatchAndEveryRankBusy) {
  FakeClock clock;
  StragglerTracker tracker(3, {.factor = 1.3, .window = 10}, clock);
  RunSteps(tracker, clock, 1, 10, {100, 100, 5000});
  const std::optional<std::vector<int64_t>> plan = PlanRebalance(tracker, {4, 4, 4}, 12);
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(*plan, ElementsAre(6, 5, 1));
  // Without sync-BN a rank normalises over its own rows and needs two: the slow rank
  // keeps two.
  const std::optional<std::vector<int64_t>> bn_plan = PlanRebalance(tracker, {4, 4, 4}, 12, /*min_share=*/2);
  ASSERT_TRUE(bn_plan.has_value());
  EXPECT_THAT(*bn_plan, ElementsAre(5, 5, 2));
}

TEST(StragglerReport, CsvAndLogLine) {
  const StragglerEvent e = {.step = 140,
                            .rank = 1,
                            .window_steps = 20,
                            .rank_compute_ms = 182.4,
                            .median_compute_ms = 79.0,
                            .ratio = 182.4 / 79.0,
                            .wall_time_s = 12.5};
  EXPECT_EQ(StragglerCsvHeader(), "batch_size,epoch,step,rank,rank_compute_ms,median_compute_ms,ratio");
  EXPECT_EQ(StragglerCsvLine(e, 256, 3), "256,3,140,1,182.400,79.000,2.309");
  EXPECT_EQ(DescribeEvent(e),
            "straggler: rank 1 compute 182.4 ms/step over the last 20 steps, 2.31x the median 79.0 ms (step 140)");
}

TEST(StragglerConfig, ValidationNamesTheField) {
  EXPECT_TRUE(ValidateStragglerConfig({}).ok());
  const absl::Status factor = ValidateStragglerConfig({.factor = 1.0, .window = 20});
  EXPECT_EQ(factor.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(factor.message()), HasSubstr("straggler factor 1"));
  const absl::Status window = ValidateStragglerConfig({.factor = 1.3, .window = 0});
  EXPECT_THAT(std::string(window.message()), HasSubstr("straggler window 0"));
}

TEST(StragglerTrackerDeathTest, RejectsMisuse) {
  FakeClock clock;
  StragglerTracker tracker(2, {}, clock);
  EXPECT_DEATH(tracker.AddStep(1, Step({100})), "per_rank.size");
  tracker.AddStep(5, Step({100, 100}));
  EXPECT_DEATH(tracker.AddStep(5, Step({100, 100})), "global_step");
  EXPECT_DEATH(tracker.AddStep(6, Step({100, -1})), "step 6");
  EXPECT_DEATH(StragglerTracker(2, {.factor = 0.9, .window = 20}, clock), "factor");
}

}  // namespace
}  // namespace gantry
