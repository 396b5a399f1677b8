#include "worker/train/train_observer.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace gantry {

absl::Status StopPoint(Communicator& comm, TrainObserver& observer, const CommOptions& opts, int64_t batch_size,
                       int64_t epoch, int64_t step) {
  float stop = observer.ShouldStop() ? 1.0f : 0.0f;
  if (absl::Status s = comm.AllReduceSum(&stop, 1, opts); !s.ok()) return s;
  if (stop == 0.0f) return absl::OkStatus();
  return absl::CancelledError(absl::StrCat("stopped before batch ", batch_size, " epoch ", epoch, " step ", step));
}

std::optional<std::vector<int64_t>> UsableShares(const std::optional<std::vector<int64_t>>& planned,
                                                 int64_t batch_size, int world_size) {
  if (!planned.has_value()) return std::nullopt;
  const std::vector<int64_t>& shares = *planned;
  const bool sized = shares.size() == static_cast<size_t>(world_size);
  const bool positive = std::all_of(shares.begin(), shares.end(), [](int64_t s) { return s >= 1; });
  const bool sums = std::accumulate(shares.begin(), shares.end(), int64_t{0}) == batch_size;
  if (sized && positive && sums) return shares;
  spdlog::warn("ignoring the planned shares {} for global batch {} on {} rank(s): expected one share >= 1 per rank, "
               "summing to the batch",
               absl::StrJoin(shares, "/"), batch_size, world_size);
  return std::nullopt;
}

std::vector<RankWindow> RankWindows(const StragglerTracker& tracker, const std::vector<int64_t>& shares) {
  std::vector<RankWindow> windows;
  for (size_t r = 0; r < shares.size(); ++r) {
    const int rank = static_cast<int>(r);
    windows.push_back({.rank = rank,
                       .share = shares[r],
                       .window_steps = tracker.window_steps(),
                       .median = tracker.WindowMedian(rank)});
  }
  return windows;
}

}  // namespace gantry
