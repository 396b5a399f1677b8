// Whether a global batch can be split across a group's ranks for a run: the one rule the
// coordinator (at submission, when the world size is known), the trainer (before it
// trains) and the rebalancing (the coordinator's epoch planner, a standalone run's
// PlanRebalance) all apply.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "runspec/train_config.h"

namespace gantry {

// The fewest rows a BatchNorm layer of `model` must see in training: with one row per
// channel there is no variance (DCGAN's first BatchNorm normalises over the batch alone).
int64_t MinBatchNormRows(const std::string& model);

// The smallest share of a global batch any rank may get in this run: 1, or without
// --sync-bn the model's BatchNorm minimum (each rank normalises over its own rows).
int64_t MinShare(const TrainConfig& config);

// The fewest rows a rank gets when `batch` is split evenly across `world` ranks
// (EvenShares: batch / world each, some ranks one more).
int64_t SmallestEvenShare(int64_t batch, int world);

// OK when `batch` rows can be split across `world` ranks: even shares give every rank at
// least MinShare(config), and with --sync-bn the whole batch holds the BatchNorm minimum.
// INVALID_ARGUMENT naming --batch-size, the ranks and the fix otherwise.
absl::Status CheckBatchFitsRanks(const TrainConfig& config, int64_t batch, int world);

}  // namespace gantry
