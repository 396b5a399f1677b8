// Rank 0's view of per-rank step timings: which ranks are stragglers, how fast each rank
// processes samples, and whether re-splitting the global batch would shorten the step.
//
// Flagging rule. After every step, once the window holds `window` steps, each rank's
// compute time is summarised by its median over the window, and the group's typical
// time by the lower median over ranks of those per-rank medians. A rank is flagged while
//     median_r > factor × group median.
// The median over the window means a rank must be slow in more than half of the last
// `window` steps to be flagged (and fast in more than half to recover), so one hiccup
// (a page fault, a GC in the loader) never flags and a persistent slowdown always does.
// The lower median over ranks is the middle rank for odd counts and the faster of the two
// middle ranks for even counts: a straggler then cannot pull the baseline towards itself
// (with 2 ranks the interpolated median is their mean, and a rank 2x slower than its peer
// would sit at only 1.33x of it).
//
// Events. A flagged rank yields a StragglerEvent when it becomes flagged and then again
// every `window` steps while it stays flagged, never more than once per `window` steps
// for the same rank, however often it flaps around the threshold. A rank that recovers is
// simply unflagged (IsFlagged), without an event.
//
// Only compute time decides: all-reduce wait is where fast ranks wait for slow ones (the
// victims, not the culprits), and data wait is reported by the epoch timing instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/clock.h"

namespace gantry {

// One rank's times for one step, in seconds: the O(ranks) numbers rank 0 gathers.
struct StepTiming {
  double data_wait_s = 0;       // blocked on the data loader before the step's compute
  double compute_s = 0;         // forward, backward and update on the rank's own shard
  double allreduce_wait_s = 0;  // inside gradient all-reduces, mostly waiting for peers
};

// The longest straggler window: each rank keeps this many steps of timings.
inline constexpr int kMaxStragglerWindow = 10000;

struct StragglerConfig {
  double factor = 1.3;  // flag when a rank's median exceeds factor × the group median; > 1
  int window = 20;      // steps per median, and the minimum spacing of a rank's events; in [1, kMaxStragglerWindow]
  bool operator==(const StragglerConfig&) const = default;
};

// INVALID_ARGUMENT naming the field, for configs read from a job spec.
absl::Status ValidateStragglerConfig(const StragglerConfig& config);

struct StragglerEvent {
  int64_t step = 0;              // global step at which the event fired
  int rank = 0;
  int window_steps = 0;          // steps the medians were taken over
  double rank_compute_ms = 0;    // the rank's median compute time per step
  double median_compute_ms = 0;  // the group median of per-rank medians
  double ratio = 0;              // rank_compute_ms / median_compute_ms
  double wall_time_s = 0;        // Clock::NowSeconds() when the event fired
};

class StragglerTracker {
 public:
  // CHECKs world_size >= 1 and a valid config. `clock` must outlive the tracker.
  StragglerTracker(int world_size, StragglerConfig config, const Clock& clock);

  // Records one step's timings, indexed by rank, and updates flags and events. CHECKs one
  // entry per rank, non-negative finite times and a global_step above the previous one.
  void AddStep(int64_t global_step, const std::vector<StepTiming>& per_rank);

  // The events fired since the last call, oldest first.
  std::vector<StragglerEvent> TakeNewEvents();
  // Events fired since construction, taken or not.
  int64_t flag_count() const { return flag_count_; }

  bool window_full() const { return filled_ == config_.window; }
  // Steps the window holds now (at most the configured window).
  int window_steps() const { return filled_; }
  bool IsFlagged(int rank) const;
  // Per-field medians of the rank's timings over the window; zeros while it is empty.
  StepTiming WindowMedian(int rank) const;

  // Samples per second of each rank over the window, share_r / median compute_r, where
  // `shares` are the shares the window's steps ran with. Empty until the window is full.
  std::vector<double> RankThroughput(const std::vector<int64_t>& shares) const;

  // Forgets the window and all flags (events and flag_count stay). Call after the shares
  // change: compute times measured under the old shares would misstate the new ones.
  void ResetWindow();

 private:
  std::vector<double> MedianComputeByRank() const;
  void Evaluate(int64_t global_step);

  int world_size_;
  StragglerConfig config_;
  const Clock* clock_;
  std::vector<std::vector<StepTiming>> ring_;  // [slot][rank], `window` slots
  int next_slot_ = 0;
  int filled_ = 0;
  int64_t steps_seen_ = 0;
  std::optional<int64_t> last_global_step_;
  std::vector<bool> flagged_;
  std::vector<std::optional<int64_t>> last_event_seen_;  // steps_seen_ at the rank's last event
  std::vector<StragglerEvent> pending_;
  int64_t flag_count_ = 0;
};

// stragglers.csv in the run folder: header and one row per event, without trailing
// newline. Columns: batch_size, epoch, step, rank, rank_compute_ms, median_compute_ms,
// ratio; new columns only ever go at the end.
std::string StragglerCsvHeader();
std::string StragglerCsvLine(const StragglerEvent& event, int64_t batch_size, int64_t epoch);

// A log line, e.g. "straggler: rank 1 compute 182.4 ms/step over the last 20 steps,
// 2.31x the median 79.0 ms (step 140)".
std::string DescribeEvent(const StragglerEvent& event);

// The step time the shares would give, max over ranks of share_r / throughput_r: the
// slowest rank's compute, assuming compute time is linear in the share.
double PredictedStepSeconds(const std::vector<int64_t>& shares, const std::vector<double>& throughput);

// New shares for `global_batch` in proportion to the measured throughput, or nullopt when
// the window is not full yet, the plan equals the current one, or PredictedStepSeconds
// would not drop by at least `min_gain` (a fraction of the current step), so a balanced
// group is never churned. No rank is planned below `min_share` rows (runspec/batch_fit.h
// MinShare: a rank normalising BatchNorm over its own rows needs two).
// CHECKs that `current_shares` (the shares the window ran with, each >= 1) sum to
// global_batch, and that global_batch holds min_share rows per rank.
std::optional<std::vector<int64_t>> PlanRebalance(const StragglerTracker& tracker,
                                                  const std::vector<int64_t>& current_shares, int64_t global_batch,
                                                  int64_t min_share = 1, double min_gain = 0.05);

}  // namespace gantry
