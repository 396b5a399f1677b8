#include "coordinator/jobs/epoch_planner.h"

#include <algorithm>

#include "common/batch_shares.h"
#include "common/check.h"
#include "common/straggler_tracker.h"

namespace gantry {
namespace {

v1::ShardPlan MakePlan(const ResolvedSpec& spec, int64_t batch_size, int64_t epoch, const std::vector<int64_t>& shares,
                       bool rebalanced) {
  v1::ShardPlan plan;
  plan.set_batch_size(batch_size);
  plan.set_epoch(epoch);
  plan.set_seed(spec.seed);
  for (int64_t s : shares) plan.add_shares(s);
  plan.set_rebalanced(rebalanced);
  return plan;
}

}  // namespace

v1::ShardPlan EpochPlanner::FirstPlan(const ResolvedSpec& spec, int world_size) const {
  CHECK(!spec.batch_sizes.empty());
  const int64_t batch = spec.batch_sizes.front();
  return MakePlan(spec, batch, 1, EvenShares(batch, world_size), false);
}

v1::ShardPlan EpochPlanner::ResumePlan(const ResolvedSpec& spec, int world_size, int64_t batch_size,
                                       int64_t epoch) const {
  auto it = std::find(spec.batch_sizes.begin(), spec.batch_sizes.end(), batch_size);
  if (it == spec.batch_sizes.end() || epoch < 1) return FirstPlan(spec, world_size);
  if (epoch > spec.epochs) {
    if (++it == spec.batch_sizes.end()) return FirstPlan(spec, world_size);
    epoch = 1;
  }
  return MakePlan(spec, *it, epoch, EvenShares(*it, world_size), false);
}

std::optional<v1::ShardPlan> EpochPlanner::NextPlan(const ResolvedSpec& spec, const v1::ShardPlan& current,
                                                    const std::vector<v1::RankTiming>& timings) const {
  const int world = current.shares_size();
  if (current.epoch() < spec.epochs) {
    if (std::optional<std::vector<int64_t>> better = Rebalanced(spec, current, timings)) {
      return MakePlan(spec, current.batch_size(), current.epoch() + 1, *better, true);
    }
    const std::vector<int64_t> same(current.shares().begin(), current.shares().end());
    return MakePlan(spec, current.batch_size(), current.epoch() + 1, same, current.rebalanced());
  }
  auto it = std::find(spec.batch_sizes.begin(), spec.batch_sizes.end(), current.batch_size());
  if (it == spec.batch_sizes.end() || ++it == spec.batch_sizes.end()) return std::nullopt;
  return MakePlan(spec, *it, 1, EvenShares(*it, world), false);
}

std::optional<std::vector<int64_t>> EpochPlanner::Rebalanced(const ResolvedSpec& spec, const v1::ShardPlan& current,
                                                             const std::vector<v1::RankTiming>& timings) const {
  const size_t world = static_cast<size_t>(current.shares_size());
  if (!spec.rebalance || timings.size() != world) return std::nullopt;
  std::vector<int64_t> shares(world);
  std::vector<double> throughput(world, 0.0);
  for (const v1::RankTiming& t : timings) {
    const auto r = static_cast<size_t>(t.rank());
    if (t.rank() < 0 || r >= world || throughput[r] > 0) return std::nullopt;  // out of range or twice
    if (t.window_steps() < spec.straggler_window || t.compute_ms() <= 0) return std::nullopt;
    if (t.share() != current.shares(t.rank())) return std::nullopt;  // measured under another plan
    shares[r] = t.share();
    throughput[r] = static_cast<double>(t.share()) / (t.compute_ms() * 1e-3);
  }
  absl::StatusOr<std::vector<int64_t>> candidate = ProportionalShares(current.batch_size(), throughput, spec.min_share);
  if (!candidate.ok() || *candidate == shares) return std::nullopt;
  const double now_s = PredictedStepSeconds(shares, throughput);
  const double then_s = PredictedStepSeconds(*candidate, throughput);
  if (then_s > (1.0 - min_gain_) * now_s) return std::nullopt;
  return *candidate;
}

}  // namespace gantry
