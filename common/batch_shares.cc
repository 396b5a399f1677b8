#include "common/batch_shares.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/check.h"

namespace gantry {
namespace {

absl::Status ValidateProportionalInputs(int64_t global_batch, const std::vector<double>& throughput,
                                        int64_t min_share) {
  if (throughput.empty()) return absl::InvalidArgumentError("shard plan: no per-rank throughput given");
  for (size_t r = 0; r < throughput.size(); ++r) {
    if (!std::isfinite(throughput[r]) || throughput[r] <= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shard plan: throughput of rank %d is %g samples/s, expected a positive finite number", r, throughput[r]));
    }
  }
  if (min_share < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("shard plan: min_share %d is below 1; every rank needs at least one sample", min_share));
  }
  const auto n = static_cast<int64_t>(throughput.size());
  if (global_batch < n * min_share) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shard plan: global batch %d is smaller than %d ranks x min_share %d; use a batch of at least %d",
        global_batch, n, min_share, n * min_share));
  }
  return absl::OkStatus();
}

// Real-valued shares: ranks whose proportional share falls below min_share are pinned
// there, and the remaining batch is re-split among the others. Pinning one rank lowers
// everyone else's share, so this repeats until no share falls below min_share; it ends
// within n rounds because B >= n * min_share means at least one rank always stays free.
std::vector<double> PinnedIdealShares(int64_t global_batch, const std::vector<double>& throughput,
                                      int64_t min_share) {
  const size_t n = throughput.size();
  std::vector<bool> pinned(n, false);
  std::vector<double> ideal(n, static_cast<double>(min_share));
  for (bool changed = true; changed;) {
    changed = false;
    double free_batch = static_cast<double>(global_batch);
    double free_throughput = 0;
    for (size_t r = 0; r < n; ++r) {
      if (pinned[r]) {
        free_batch -= static_cast<double>(min_share);
      } else {
        free_throughput += throughput[r];
      }
    }
    if (free_throughput <= 0) break;
    for (size_t r = 0; r < n; ++r) {
      if (pinned[r]) continue;
      ideal[r] = free_batch * throughput[r] / free_throughput;
      if (ideal[r] < static_cast<double>(min_share)) {
        pinned[r] = true;
        ideal[r] = static_cast<double>(min_share);
        changed = true;
      }
    }
  }
  return ideal;
}

// Floors every ideal share, then hands the leftover samples one each to the ranks with
// the largest fractional parts.
std::vector<int64_t> LargestRemainder(int64_t global_batch, const std::vector<double>& ideal) {
  const size_t n = ideal.size();
  std::vector<int64_t> shares(n);
  for (size_t r = 0; r < n; ++r) shares[r] = static_cast<int64_t>(std::floor(ideal[r]));
  const int64_t leftover = global_batch - std::accumulate(shares.begin(), shares.end(), int64_t{0});
  // Rounding in the ideal shares can move their sum by far less than one sample.
  CHECK(leftover >= 0 && leftover <= static_cast<int64_t>(n)) << "leftover " << leftover;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ideal[a] - static_cast<double>(shares[a]) > ideal[b] - static_cast<double>(shares[b]);
  });
  for (int64_t i = 0; i < leftover; ++i) ++shares[order[static_cast<size_t>(i)]];
  return shares;
}

}  // namespace

std::vector<int64_t> EvenShares(int64_t global_batch, int world_size) {
  CHECK_GE(world_size, 1);
  CHECK_GE(global_batch, world_size) << "every rank needs at least one sample";
  std::vector<int64_t> shares(static_cast<size_t>(world_size));
  const int64_t base = global_batch / world_size;
  const int64_t extra = global_batch % world_size;
  for (int r = 0; r < world_size; ++r) shares[static_cast<size_t>(r)] = base + (r < extra ? 1 : 0);
  return shares;
}

absl::StatusOr<std::vector<int64_t>> ProportionalShares(int64_t global_batch, const std::vector<double>& throughput,
                                                        int64_t min_share) {
  if (absl::Status s = ValidateProportionalInputs(global_batch, throughput, min_share); !s.ok()) return s;
  std::vector<int64_t> shares = LargestRemainder(global_batch, PinnedIdealShares(global_batch, throughput, min_share));
  // Unpinned ideal shares are >= min_share (an integer), so their floors are too.
  for (int64_t share : shares) CHECK_GE(share, min_share);
  return shares;
}

std::vector<RowRange> ShareRanges(const std::vector<int64_t>& shares) {
  std::vector<RowRange> ranges;
  ranges.reserve(shares.size());
  int64_t begin = 0;
  for (int64_t share : shares) {
    CHECK_GE(share, 0);
    ranges.push_back({begin, begin + share});
    begin += share;
  }
  return ranges;
}

std::vector<double> GradientWeights(const std::vector<int64_t>& shares) {
  int64_t total = 0;
  for (int64_t share : shares) {
    CHECK_GE(share, 0);
    total += share;
  }
  CHECK_GT(total, 0);
  std::vector<double> weights;
  weights.reserve(shares.size());
  for (int64_t share : shares) weights.push_back(static_cast<double>(share) / static_cast<double>(total));
  return weights;
}

}  // namespace gantry
