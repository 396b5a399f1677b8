// The scheduler's choice, the lease table and the epoch planner: the pure parts.
#include "coordinator/jobs/epoch_planner.h"
#include "coordinator/jobs/lease_table.h"
#include "coordinator/jobs/scheduler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(Scheduler, OldestFittingJobFirst) {
  const std::vector<QueuedJob> queued = {{"job-1", 4, 64}, {"job-2", 2, 64}, {"job-3", 0, 64}, {"job-4", 2, 64}};
  EXPECT_EQ(PickJob(queued, {2}), 1u);  // job-1 wants 4 ranks but does not block job-2
  EXPECT_EQ(PickJob(queued, {4}), 0u);
  EXPECT_EQ(PickJob(queued, {3}), 2u);  // only the any-size job fits 3 ranks
  EXPECT_EQ(PickJob({}, {2}), std::nullopt);
}

TEST(Scheduler, EveryRankNeedsASample) {
  EXPECT_FALSE(GroupFits({"job-1", 0, 2}, {4}));
  EXPECT_TRUE(GroupFits({"job-1", 0, 4}, {4}));
  EXPECT_EQ(PickJob({{"job-1", 0, 2}}, {4}), std::nullopt);
}

TEST(Scheduler, AnAnySizeJobWaitsForAGroupWhoseRanksEachGetItsMinimumShare) {
  // Batch 3 without --sync-bn: DCGAN's BatchNorm needs 2 rows per rank, so 1 rank only.
  const QueuedJob per_rank_bn{"job-1", 0, 3, false, /*min_share=*/2};
  EXPECT_FALSE(GroupFits(per_rank_bn, {2}));
  EXPECT_TRUE(GroupFits(per_rank_bn, {1}));
  EXPECT_EQ(PickJob({per_rank_bn, {"job-2", 0, 4, false, 2}}, {2}), 1u) << "it does not block a job that fits";
  // The same batch with --sync-bn (a share of 1 row) fits 2 and 3 ranks, as before.
  const QueuedJob synced{"job-3", 0, 3, false, /*min_share=*/1};
  EXPECT_TRUE(GroupFits(synced, {2}));
  EXPECT_TRUE(GroupFits(synced, {3}));
  EXPECT_FALSE(GroupFits(synced, {4}));
  EXPECT_EQ(FitNeeds(per_rank_bn),
            "a group of at most 1 rank(s) (its smallest batch, 3, must give every rank at least 2 row(s); "
            "--sync-bn lowers that to 1)");
  EXPECT_EQ(FitNeeds({"job-4", 4, 64, /*needs_gpus=*/true, 2}), "a group of 4 rank(s) whose ranks all have a GPU");
}

TEST(Scheduler, GpuJobsWaitForAGroupOfGpusAndDoNotBlockTheOthers) {
  const std::vector<QueuedJob> queued = {{"job-1", 0, 64, /*needs_gpus=*/true}, {"job-2", 0, 64, false}};
  EXPECT_EQ(PickJob(queued, {.world_size = 2, .gpus = false}), 1u);
  EXPECT_EQ(PickJob(queued, {.world_size = 2, .gpus = true}), 0u);
  EXPECT_TRUE(GroupFits(queued[1], {.world_size = 2, .gpus = true})) << "a GPU group also runs CPU jobs";
  EXPECT_TRUE(AllDevicesAreGpus({"cuda:0 NVIDIA H100 80GB HBM3", "cuda:1 NVIDIA H100 80GB HBM3"}));
  EXPECT_FALSE(AllDevicesAreGpus({"cuda:0 NVIDIA H100 80GB HBM3", "cpu"})) << "every rank needs one";
  EXPECT_FALSE(AllDevicesAreGpus({})) << "a group that reported nothing";
}

TEST(LeaseTable, ExpiresOnlyPastTheLease) {
  LeaseTable leases(10);
  leases.Renew("group-1", 100);
  leases.Renew("group-2", 105);
  EXPECT_TRUE(leases.TakeExpired(110).empty());  // deadline 110 is not yet past
  EXPECT_EQ(leases.TakeExpired(111), std::vector<std::string>{"group-1"});
  EXPECT_FALSE(leases.Holds("group-1"));
  leases.Renew("group-2", 114);
  EXPECT_TRUE(leases.TakeExpired(120).empty());
  EXPECT_EQ(leases.SinceRenewal("group-2", 120), 6);
  EXPECT_EQ(leases.TakeExpired(125), std::vector<std::string>{"group-2"});
}

ResolvedSpec Sweep(bool rebalance) {
  ResolvedSpec spec;
  spec.batch_sizes = {10, 64};
  spec.epochs = 2;
  spec.seed = 5;
  spec.rebalance = rebalance;
  spec.straggler_window = 20;
  return spec;
}

std::vector<v1::RankTiming> Timings(const v1::ShardPlan& plan, const std::vector<double>& compute_ms, int window) {
  std::vector<v1::RankTiming> timings;
  for (int r = 0; r < plan.shares_size(); ++r) {
    v1::RankTiming t;
    t.set_rank(r);
    t.set_share(plan.shares(r));
    t.set_window_steps(window);
    t.set_compute_ms(compute_ms[static_cast<size_t>(r)]);
    timings.push_back(t);
  }
  return timings;
}

TEST(EpochPlanner, WalksTheSweepWithEvenShares) {
  EpochPlanner planner;
  const ResolvedSpec spec = Sweep(false);
  v1::ShardPlan plan = planner.FirstPlan(spec, 3);
  EXPECT_EQ(plan.batch_size(), 10);
  EXPECT_EQ(plan.epoch(), 1);
  EXPECT_EQ(plan.seed(), 5u);
  EXPECT_EQ(std::vector<int64_t>(plan.shares().begin(), plan.shares().end()), (std::vector<int64_t>{4, 3, 3}));
  plan = *planner.NextPlan(spec, plan, Timings(plan, {1, 1, 9}, 20));  // no rebalancing asked
  EXPECT_EQ(plan.epoch(), 2);
  EXPECT_EQ(plan.shares(0), 4);
  plan = *planner.NextPlan(spec, plan, {});
  EXPECT_EQ(plan.batch_size(), 64);
  EXPECT_EQ(plan.epoch(), 1);
  EXPECT_EQ(plan.shares(0), 22);
  plan = *planner.NextPlan(spec, plan, {});
  EXPECT_FALSE(planner.NextPlan(spec, plan, {}).has_value());
}

TEST(EpochPlanner, RebalancesTowardsMeasuredSpeed) {
  EpochPlanner planner;
  const ResolvedSpec spec = Sweep(true);
  v1::ShardPlan first = planner.FirstPlan(spec, 2);  // 5/5
  // Rank 1 takes 4x as long for the same share: it should get a fifth of the batch.
  std::optional<v1::ShardPlan> next = planner.NextPlan(spec, first, Timings(first, {10, 40}, 20));
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(next->rebalanced());
  EXPECT_EQ(std::vector<int64_t>(next->shares().begin(), next->shares().end()), (std::vector<int64_t>{8, 2}));
  // A new batch size starts even again, as a standalone worker does.
  std::optional<v1::ShardPlan> after = planner.NextPlan(spec, *next, {});
  EXPECT_EQ(after->shares(0), 32);
  EXPECT_FALSE(after->rebalanced());
}

TEST(EpochPlanner, KeepsSharesWithoutCompleteEvidence) {
  EpochPlanner planner;
  const ResolvedSpec spec = Sweep(true);
  const v1::ShardPlan first = planner.FirstPlan(spec, 2);
  auto shares_after = [&](const std::vector<v1::RankTiming>& timings) {
    const v1::ShardPlan next = *planner.NextPlan(spec, first, timings);
    return std::vector<int64_t>(next.shares().begin(), next.shares().end());
  };
  const std::vector<int64_t> even = {5, 5};
  EXPECT_EQ(shares_after(Timings(first, {10, 30}, 19)), even);   // window not full
  EXPECT_EQ(shares_after(Timings(first, {10, 10.3}, 20)), even);  // gain too small
  std::vector<v1::RankTiming> stale = Timings(first, {10, 30}, 20);
  stale[0].set_share(6);
  EXPECT_EQ(shares_after(stale), even);  // measured under another plan
  EXPECT_EQ(shares_after({Timings(first, {10, 30}, 20)[0]}), even);  // a rank missing
}

}  // namespace
}  // namespace gantry

namespace gantry {
namespace {

TEST(EpochPlanner, AResumedAttemptIsPlannedFromItsCheckpointsEpoch) {
  ResolvedSpec spec;
  spec.batch_sizes = {8, 16};
  spec.epochs = 2;
  spec.seed = 7;
  const EpochPlanner planner;
  const v1::ShardPlan mid = planner.ResumePlan(spec, 2, 8, 2);
  EXPECT_EQ(mid.batch_size(), 8);
  EXPECT_EQ(mid.epoch(), 2);
  EXPECT_EQ(mid.seed(), 7u);
  EXPECT_THAT(mid.shares(), ::testing::ElementsAre(4, 4));
  const v1::ShardPlan next_batch = planner.ResumePlan(spec, 2, 8, 3);
  EXPECT_EQ(next_batch.batch_size(), 16);
  EXPECT_EQ(next_batch.epoch(), 1);
  // The run's end, and positions the spec does not have, fall back to the first plan.
  for (const auto& [batch, epoch] : {std::pair<int64_t, int64_t>{16, 3}, {32, 1}, {8, 0}}) {
    const v1::ShardPlan plan = planner.ResumePlan(spec, 2, batch, epoch);
    EXPECT_EQ(plan.batch_size(), 8) << batch << " " << epoch;
    EXPECT_EQ(plan.epoch(), 1) << batch << " " << epoch;
  }
}

}  // namespace
}  // namespace gantry
