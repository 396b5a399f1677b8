// The shard plan of each epoch: which share of every global batch each rank takes, and
// the seed the epoch is shuffled with.
//
// A batch size starts with even shares (common/batch_shares.h EvenShares), as a standalone
// `gantry-worker train` does. When the spec asks for rebalancing, the plan after an
// epoch follows the ranks' measured speed (share / median compute time, reported with
// the epoch row): ProportionalShares of the same global batch, adopted only when the
// predicted step time (the slowest rank's) drops by at least `min_gain`, so a balanced
// group is never churned. The seed is the run's seed: the worker's sampler derives each
// epoch's permutation from (seed, epoch), so every rank, and a resumed attempt, shuffles
// an epoch the same way.
#pragma once

#include <optional>
#include <vector>

#include "coordinator/validation/spec_validator.h"
#include "gantry/v1/metrics.pb.h"

namespace gantry {

class EpochPlanner {
 public:
  explicit EpochPlanner(double min_gain = 0.05) : min_gain_(min_gain) {}

  // Epoch 1 of the sweep's first batch size. CHECKs the batch fits the group.
  v1::ShardPlan FirstPlan(const ResolvedSpec& spec, int world_size) const;

  // The plan of the first epoch a resumed attempt trains: `epoch` of `batch_size` (the
  // next batch size's epoch 1 when `epoch` is past the last), with even shares; the
  // first plan when (batch_size, epoch) is not in the sweep (a checkpoint of another
  // spec, or the run's end).
  v1::ShardPlan ResumePlan(const ResolvedSpec& spec, int world_size, int64_t batch_size, int64_t epoch) const;

  // The plan of the epoch after `current`, or nullopt after the sweep's last epoch.
  // `timings` (one per rank, from the report of the finished epoch) are used when the
  // spec rebalances and they are complete: every rank, a full straggler window, shares
  // equal to the current plan's, positive compute times; otherwise shares stay.
  std::optional<v1::ShardPlan> NextPlan(const ResolvedSpec& spec, const v1::ShardPlan& current,
                                        const std::vector<v1::RankTiming>& timings) const;

 private:
  std::optional<std::vector<int64_t>> Rebalanced(const ResolvedSpec& spec, const v1::ShardPlan& current,
                                                 const std::vector<v1::RankTiming>& timings) const;
  double min_gain_;
};

}  // namespace gantry
