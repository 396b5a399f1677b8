// How one global batch of B samples is split across the ranks of a data-parallel group.
//
// Contract of every plan: shares are per-rank sample counts summing exactly to B, so
// every sample of a global batch belongs to exactly one rank. Rank r takes the
// contiguous rows ShareRanges(shares)[r] of each global batch (rows in the order the
// sampler yields them), and scales its gradient of the mean loss over its own rows by
// GradientWeights(shares)[r] before the sum all-reduce; the sum is then the gradient of
// the mean loss over all B rows, whatever the split.
//
// Every rank gets at least one sample (B >= world size): a rank with no rows would have
// no local mean to weight, and the BatchNorm statistics of an empty shard are undefined.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// Shares differing by at most one, the larger first: rank r gets B/n + (r < B%n).
// CHECKs world_size >= 1 and global_batch >= world_size (validate B at the edge).
std::vector<int64_t> EvenShares(int64_t global_batch, int world_size);

// Shares proportional to `throughput` (samples/s of each rank), each at least
// `min_share`, summing exactly to B. A rank whose proportional share would fall below
// min_share is pinned at min_share and the rest is split among the others in proportion;
// the integer shares come from the largest-remainder method (ties go to the lower rank),
// so equal throughputs give EvenShares. INVALID_ARGUMENT, naming the problem, for an
// empty throughput list, a throughput that is not a positive finite number, min_share < 1,
// or B < world size × min_share.
absl::StatusOr<std::vector<int64_t>> ProportionalShares(int64_t global_batch, const std::vector<double>& throughput,
                                                        int64_t min_share = 1);

// Rows [begin, end) of a global batch, 0-based.
struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const RowRange&) const = default;
};

// Rank r's rows: the ranges tile [0, B) in rank order. CHECKs shares are non-negative.
std::vector<RowRange> ShareRanges(const std::vector<int64_t>& shares);

// share_r / B for each rank; they sum to 1. CHECKs shares are non-negative with a
// positive sum.
std::vector<double> GradientWeights(const std::vector<int64_t>& shares);

}  // namespace gantry
