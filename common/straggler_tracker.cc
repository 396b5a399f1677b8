#include "common/straggler_tracker.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_format.h"
#include "common/batch_shares.h"
#include "common/check.h"
#include "common/timing_summary.h"

namespace gantry {
namespace {

// A median compute time of zero (a rank whose timer did not tick) would make its
// throughput infinite, which no share plan can use; one microsecond is far below any
// real step.
constexpr double kMinComputeSeconds = 1e-6;

double LowerMedian(std::vector<double> values) {
  CHECK(!values.empty());
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

bool ValidSeconds(double s) { return std::isfinite(s) && s >= 0; }

}  // namespace

absl::Status ValidateStragglerConfig(const StragglerConfig& config) {
  if (!(config.factor > 1.0) || !std::isfinite(config.factor)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "straggler factor %g: expected a finite number above 1 (e.g. 1.3 flags ranks 30%% slower than the median)",
        config.factor));
  }
  if (config.window < 1 || config.window > kMaxStragglerWindow) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "straggler window %d: expected 1 to %d steps (e.g. 20)", config.window, kMaxStragglerWindow));
  }
  return absl::OkStatus();
}

StragglerTracker::StragglerTracker(int world_size, StragglerConfig config, const Clock& clock)
    : world_size_(world_size),
      config_(config),
      clock_(&clock),
      flagged_(static_cast<size_t>(std::max(world_size, 0)), false),
      last_event_seen_(static_cast<size_t>(std::max(world_size, 0))) {
  CHECK_GE(world_size, 1);
  const absl::Status valid = ValidateStragglerConfig(config);
  CHECK(valid.ok()) << valid.message();
  ring_.assign(static_cast<size_t>(config_.window), std::vector<StepTiming>(static_cast<size_t>(world_size)));
}

void StragglerTracker::AddStep(int64_t global_step, const std::vector<StepTiming>& per_rank) {
  CHECK_EQ(per_rank.size(), static_cast<size_t>(world_size_));
  if (last_global_step_.has_value()) CHECK_GT(global_step, *last_global_step_);
  for (const StepTiming& t : per_rank) {
    CHECK(ValidSeconds(t.data_wait_s) && ValidSeconds(t.compute_s) && ValidSeconds(t.allreduce_wait_s))
        << "step " << global_step << ": " << t.data_wait_s << ", " << t.compute_s << ", " << t.allreduce_wait_s;
  }
  last_global_step_ = global_step;
  ring_[static_cast<size_t>(next_slot_)] = per_rank;
  next_slot_ = (next_slot_ + 1) % config_.window;
  filled_ = std::min(filled_ + 1, config_.window);
  ++steps_seen_;
  if (window_full()) Evaluate(global_step);
}

void StragglerTracker::Evaluate(int64_t global_step) {
  const std::vector<double> medians = MedianComputeByRank();
  const double baseline = LowerMedian(medians);
  // With a zero baseline most ranks report no compute at all: there is nothing to compare.
  if (baseline <= 0) return;
  for (int r = 0; r < world_size_; ++r) {
    const auto ur = static_cast<size_t>(r);
    const double ratio = medians[ur] / baseline;
    flagged_[ur] = ratio > config_.factor;
    const std::optional<int64_t>& last = last_event_seen_[ur];
    if (!flagged_[ur] || (last.has_value() && steps_seen_ - *last < config_.window)) continue;
    last_event_seen_[ur] = steps_seen_;
    ++flag_count_;
    pending_.push_back({.step = global_step,
                        .rank = r,
                        .window_steps = config_.window,
                        .rank_compute_ms = medians[ur] * 1e3,
                        .median_compute_ms = baseline * 1e3,
                        .ratio = ratio,
                        .wall_time_s = clock_->NowSeconds()});
  }
}

std::vector<StragglerEvent> StragglerTracker::TakeNewEvents() {
  std::vector<StragglerEvent> events;
  events.swap(pending_);
  return events;
}

bool StragglerTracker::IsFlagged(int rank) const {
  CHECK(rank >= 0 && rank < world_size_) << "rank " << rank;
  return flagged_[static_cast<size_t>(rank)];
}

StepTiming StragglerTracker::WindowMedian(int rank) const {
  CHECK(rank >= 0 && rank < world_size_) << "rank " << rank;
  std::vector<double> data_wait, compute, allreduce_wait;
  // Slots [0, filled_) hold the recorded steps until the ring first wraps, all slots after.
  for (int slot = 0; slot < filled_; ++slot) {
    const StepTiming& t = ring_[static_cast<size_t>(slot)][static_cast<size_t>(rank)];
    data_wait.push_back(t.data_wait_s);
    compute.push_back(t.compute_s);
    allreduce_wait.push_back(t.allreduce_wait_s);
  }
  return {.data_wait_s = Percentile(data_wait, 0.5),
          .compute_s = Percentile(compute, 0.5),
          .allreduce_wait_s = Percentile(allreduce_wait, 0.5)};
}

std::vector<double> StragglerTracker::MedianComputeByRank() const {
  std::vector<double> medians(static_cast<size_t>(world_size_));
  for (int r = 0; r < world_size_; ++r) medians[static_cast<size_t>(r)] = WindowMedian(r).compute_s;
  return medians;
}

std::vector<double> StragglerTracker::RankThroughput(const std::vector<int64_t>& shares) const {
  CHECK_EQ(shares.size(), static_cast<size_t>(world_size_));
  if (!window_full()) return {};
  const std::vector<double> medians = MedianComputeByRank();
  std::vector<double> throughput(shares.size());
  for (size_t r = 0; r < shares.size(); ++r) {
    throughput[r] = static_cast<double>(shares[r]) / std::max(medians[r], kMinComputeSeconds);
  }
  return throughput;
}

void StragglerTracker::ResetWindow() {
  next_slot_ = 0;
  filled_ = 0;
  std::fill(flagged_.begin(), flagged_.end(), false);
}

std::string StragglerCsvHeader() { return "batch_size,epoch,step,rank,rank_compute_ms,median_compute_ms,ratio"; }

std::string StragglerCsvLine(const StragglerEvent& e, int64_t batch_size, int64_t epoch) {
  return absl::StrFormat("%d,%d,%d,%d,%.3f,%.3f,%.3f", batch_size, epoch, e.step, e.rank, e.rank_compute_ms,
                         e.median_compute_ms, e.ratio);
}

std::string DescribeEvent(const StragglerEvent& e) {
  return absl::StrFormat("straggler: rank %d compute %.1f ms/step over the last %d steps, %.2fx the median %.1f ms "
                         "(step %d)",
                         e.rank, e.rank_compute_ms, e.window_steps, e.ratio, e.median_compute_ms, e.step);
}

double PredictedStepSeconds(const std::vector<int64_t>& shares, const std::vector<double>& throughput) {
  CHECK_EQ(shares.size(), throughput.size());
  double slowest = 0;
  for (size_t r = 0; r < shares.size(); ++r) {
    slowest = std::max(slowest, static_cast<double>(shares[r]) / throughput[r]);
  }
  return slowest;
}

std::optional<std::vector<int64_t>> PlanRebalance(const StragglerTracker& tracker,
                                                  const std::vector<int64_t>& current_shares, int64_t global_batch,
                                                  int64_t min_share, double min_gain) {
  for (int64_t share : current_shares) CHECK_GE(share, 1);
  CHECK_EQ(std::accumulate(current_shares.begin(), current_shares.end(), int64_t{0}), global_batch);
  const std::vector<double> throughput = tracker.RankThroughput(current_shares);
  if (throughput.empty()) return std::nullopt;
  absl::StatusOr<std::vector<int64_t>> proposed = ProportionalShares(global_batch, throughput, min_share);
  // The inputs were checked above and the throughputs are positive and finite.
  CHECK(proposed.ok()) << proposed.status().message();
  const double now_s = PredictedStepSeconds(current_shares, throughput);
  const double next_s = PredictedStepSeconds(*proposed, throughput);
  if (*proposed == current_shares || next_s > now_s * (1.0 - min_gain)) return std::nullopt;
  return *std::move(proposed);
}

}  // namespace gantry
