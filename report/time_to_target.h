// Time to quality: per global batch size, when a sweep's run first reached a target
// score, read off its epoch rows. The scores exist at epoch ends only, so the crossing is
// interpolated linearly between the last scored epoch above the target and the first at
// or below it (in wall time, samples and steps alike); when the first scored epoch is
// already at the target, its end is reported and marked as an upper bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/epoch_metrics.h"

namespace gantry {

enum class TargetMetric {
  kFrechetDistance,  // epochs.csv quality_fd (image models; -1: not scored)
  kHeldOutRelL2,     // epochs.csv val_rel_l2 (flow; 0: no held-out pairs)
};

struct QualityGoal {
  TargetMetric metric = TargetMetric::kFrechetDistance;
  double value = 0;  // reached when the score is at or below it
};

// The goal of a run's --target-fd / --target-rel-l2 (nullopt when both are 0).
std::optional<QualityGoal> GoalOf(double target_fd, double target_rel_l2);

struct TimeToTarget {
  int64_t batch_size = 0;
  bool reached = false;
  bool upper_bound = false;  // reached by the first scored epoch: no earlier score to interpolate from
  double seconds = 0;        // training wall time from the batch size's start (reached only)
  double samples = 0;
  double steps = 0;
  int64_t epoch = 0;         // the first epoch at or below the target (reached only)
  double best = -1;          // the best score seen (-1: none scored)
  int64_t scored_epochs = 0;
};

// One entry per batch size, ascending.
std::vector<TimeToTarget> TimesToTarget(const std::vector<EpochRow>& rows, const QualityGoal& goal);

// Whether `row`'s score reaches the goal (a row without that score never does).
bool ReachesGoal(const EpochRow& row, const QualityGoal& goal);

// timing.md's "Time to target" section: a table of the above, with the samples relative
// to the smallest batch size's (the measure of the large-batch recipe), and a line per
// batch size that never reached it.
std::string TimeToTargetMarkdown(const std::vector<EpochRow>& rows, const QualityGoal& goal);

}  // namespace gantry
