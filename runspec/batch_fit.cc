#include "runspec/batch_fit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gantry {

int64_t MinBatchNormRows(const std::string& model) {
  // Every model gantry has normalises some layer over the batch alone.
  (void)model;
  return 2;
}

int64_t MinShare(const TrainConfig& config) { return config.sync_bn ? 1 : MinBatchNormRows(config.model); }

int64_t SmallestEvenShare(int64_t batch, int world) { return batch / world; }

absl::Status CheckBatchFitsRanks(const TrainConfig& config, int64_t batch, int world) {
  const int64_t bn_rows = MinBatchNormRows(config.model);
  if (batch < world) {
    return absl::InvalidArgumentError(absl::StrCat("--batch-size: batch ", batch, " is smaller than world_size ", world,
                                                   "; every rank needs a sample"));
  }
  if (config.sync_bn && batch < bn_rows) {
    return absl::InvalidArgumentError(absl::StrCat("--batch-size ", batch, ": ", config.model, "'s BatchNorm needs at least ",
                                                   bn_rows, " rows in a batch; use a batch size of at least ", bn_rows));
  }
  const int64_t smallest = SmallestEvenShare(batch, world);
  if (smallest < MinShare(config)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch-size ", batch, " on ", world, " rank(s) gives a rank ", smallest, " row(s), but ", config.model,
        "'s BatchNorm needs at least ", bn_rows, " per rank; use a batch size of at least ", bn_rows * world,
        world > 1 ? ", or --sync-bn (statistics over the whole batch)" : ""));
  }
  return absl::OkStatus();
}

}  // namespace gantry
