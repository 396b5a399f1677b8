#include "report/time_to_target.h"

#include <map>

#include "absl/strings/str_format.h"

namespace gantry {
namespace {

// The row's score for the goal's metric, or nullopt when the row has none.
std::optional<double> ScoreOf(const EpochRow& row, TargetMetric metric) {
  if (metric == TargetMetric::kFrechetDistance) {
    return row.quality_fd >= 0 ? std::optional<double>(row.quality_fd) : std::nullopt;
  }
  return row.val_rel_l2 > 0 ? std::optional<double>(row.val_rel_l2) : std::nullopt;
}

// Where the batch size stood at the end of an epoch.
struct Point {
  double seconds = 0, samples = 0, steps = 0;
};

double Lerp(double a, double b, double t) { return a + t * (b - a); }

// Follows one batch size's epochs (in order) to the first that reaches the goal.
class Crossing {
 public:
  Crossing(int64_t batch_size, const QualityGoal& goal) : goal_(goal) { result_.batch_size = batch_size; }

  void Add(const EpochRow& row) {
    const Point end{at_.seconds + row.seconds, at_.samples + static_cast<double>(row.steps * row.batch_size),
                    at_.steps + static_cast<double>(row.steps)};
    const std::optional<double> score = ScoreOf(row, goal_.metric);
    if (score) Scored(row.epoch, *score, end);
    at_ = end;
  }

  const TimeToTarget& result() const { return result_; }

 private:
  void Scored(int64_t epoch, double score, const Point& end) {
    ++result_.scored_epochs;
    if (result_.best < 0 || score < result_.best) result_.best = score;
    if (!result_.reached && score <= goal_.value) Reach(epoch, score, end);
    last_score_ = score;
    last_scored_ = end;
  }

  void Reach(int64_t epoch, double score, const Point& end) {
    result_.reached = true;
    result_.epoch = epoch;
    // Fraction of the way from the previous scored point to this one where the score
    // crosses the goal, assuming it moves linearly in between.
    double t = 1;
    if (last_score_) {
      t = (*last_score_ - goal_.value) / (*last_score_ - score);
    } else {
      result_.upper_bound = true;
    }
    result_.seconds = Lerp(last_scored_.seconds, end.seconds, t);
    result_.samples = Lerp(last_scored_.samples, end.samples, t);
    result_.steps = Lerp(last_scored_.steps, end.steps, t);
  }

  QualityGoal goal_;
  TimeToTarget result_;
  Point at_;
  Point last_scored_;
  std::optional<double> last_score_;
};

const char* MetricName(TargetMetric metric) {
  return metric == TargetMetric::kFrechetDistance ? "Fréchet distance" : "held-out relative L2";
}

}  // namespace

std::optional<QualityGoal> GoalOf(double target_fd, double target_rel_l2) {
  if (target_fd > 0) return QualityGoal{TargetMetric::kFrechetDistance, target_fd};
  if (target_rel_l2 > 0) return QualityGoal{TargetMetric::kHeldOutRelL2, target_rel_l2};
  return std::nullopt;
}

bool ReachesGoal(const EpochRow& row, const QualityGoal& goal) {
  const std::optional<double> score = ScoreOf(row, goal.metric);
  return score && *score <= goal.value;
}

std::vector<TimeToTarget> TimesToTarget(const std::vector<EpochRow>& rows, const QualityGoal& goal) {
  std::map<int64_t, Crossing> by_batch;
  for (const EpochRow& row : rows) {
    by_batch.try_emplace(row.batch_size, row.batch_size, goal).first->second.Add(row);
  }
  std::vector<TimeToTarget> out;
  for (const auto& [batch, crossing] : by_batch) out.push_back(crossing.result());
  return out;
}

std::string TimeToTargetMarkdown(const std::vector<EpochRow>& rows, const QualityGoal& goal) {
  const std::vector<TimeToTarget> times = TimesToTarget(rows, goal);
  std::string md = absl::StrFormat(
      "\n## Time to target (%s <= %g, interpolated between scored epochs)\n\n"
      "| global batch | reached | s to target | samples to target | steps to target | samples vs smallest batch "
      "| best score |\n|---:|:---|---:|---:|---:|---:|---:|\n",
      MetricName(goal.metric), goal.value);
  const TimeToTarget* smallest = times.empty() || !times.front().reached ? nullptr : &times.front();
  for (const TimeToTarget& t : times) {
    if (!t.reached) {
      absl::StrAppendFormat(&md, "| %d | never (%d scored epoch%s) | - | - | - | - | %s |\n", t.batch_size,
                            t.scored_epochs, t.scored_epochs == 1 ? "" : "s",
                            t.best < 0 ? std::string("-") : absl::StrFormat("%.4g", t.best));
      continue;
    }
    const std::string bound = t.upper_bound ? " (by)" : "";
    absl::StrAppendFormat(&md, "| %d | epoch %d%s | %.1f | %.0f | %.0f | %s | %.4g |\n", t.batch_size, t.epoch, bound,
                          t.seconds, t.samples, t.steps,
                          smallest != nullptr && smallest->samples > 0
                              ? absl::StrFormat("%.2fx", t.samples / smallest->samples)
                              : std::string("-"),
                          t.best);
  }
  return md;
}

}  // namespace gantry
