// One row of epochs.csv: the timing and losses of one epoch at one global batch size,
// and the accumulator that builds it from per-step measurements.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gantry {

struct EpochRow {
  int64_t batch_size = 0;
  int64_t epoch = 0;           // 1-based
  int64_t steps = 0;
  double seconds = 0;          // wall time of the epoch
  double steady_step_ms = 0;   // mean step time without the first and last 10 % of steps
  double samples_per_s = 0;    // batch_size / steady step time
  double d_loss = 0;           // mean over the epoch's steps
  double g_loss = 0;
  double step_p50_ms = 0;
  double step_p99_ms = 0;
  double data_wait_ms = 0;     // mean time per step spent waiting for the loader
  int world_size = 1;
  double allreduce_ms = 0;     // mean time per step inside the gradient all-reduces (rank 0)
  double allreduce_share = 0;  // allreduce_ms / mean step time
  int64_t straggler_flags = 0; // straggler events raised during the epoch
  double loss_scale_g = 1;     // G's loss scale at the epoch's end (1: no loss scaling)
  double loss_scale_d = 1;
  int64_t skipped_steps_g = 0; // G's optimizer steps skipped in the epoch (inf/NaN gradient)
  int64_t skipped_steps_d = 0;
  double peak_rss_mb = 0;      // peak resident set of rank 0's process so far, MiB (ru_maxrss)
  // Energy of the epoch (worker/monitor/energy_meter.h): the GPUs' NVML counters on a GPU
  // run, RAPL where readable, else CPU seconds x --watts-per-core (energy_estimated 1);
  // energy_source says which. 0 when not measured.
  double energy_j = 0;
  double energy_j_per_sample = 0;  // energy_j / (steps x batch_size)
  int energy_estimated = 0;        // 1: an estimate from CPU time, 0: measured
  // Quality of the epoch's fixed-noise samples by the dataset's judge
  // (worker/eval/quality_score.h); -1: not scored (--quality off, or no judge).
  double quality_fd = -1;                // Fréchet distance to the test set's features
  double quality_class_entropy = -1;     // mean per-sample class entropy, nats
  double quality_marginal_entropy = -1;  // entropy of the mean class distribution, nats
  double quality_confidence = -1;        // mean top class probability
  // Flow (--dataset flow): G's next-frame error on the held-out pairs at the epoch's end,
  // normalised units (worker/eval/flow_validation.h); 0 for datasets without them.
  double val_l1 = 0;
  double val_rel_l2 = 0;
  // Where energy_j comes from (report/energy_source.h): 1 estimate, 2 RAPL, 3 NVML
  // (the GPUs' counters); 0 not measured.
  int energy_source = 0;
  // The same two scores for "copy the input frame" (persistence) on the same pairs: the
  // baseline val_l1 / val_rel_l2 must beat; constant over a run (0: no held-out set).
  double val_persistence_l1 = 0;
  double val_persistence_rel_l2 = 0;
  // Kernel Inception Distance of the epoch's samples to the reference images in the
  // random-feature embedding (worker/eval/image_quality.h). Unbiased, so a close match
  // scores about 0 and sometimes a little below: "not scored" cannot be -1 as for the
  // judge's columns, it is NaN (epochs.csv "nan", JSON null, no Prometheus sample).
  double quality_kid = std::numeric_limits<double>::quiet_NaN();
  // The part of allreduce_ms the steps waited for after their compute (rank 0): all of
  // it without --overlap; with it, what backward did not hide.
  double allreduce_exposed_ms = 0;
  // Every column equal, a NaN matching a NaN (the same row: an unscored KID, or a loss
  // that diverged, read back from a checkpoint or the coordinator).
  bool operator==(const EpochRow& other) const;
};

// One column of epochs.csv: its name (also the name of the gantry.v1.EpochMetrics field
// that carries it), how the CSV prints it, and the member of EpochRow it reads.
struct EpochColumn {
  const char* name;
  const char* csv_format;  // an absl::StrFormat conversion: "%d", "%.3f", ...
  std::variant<int64_t EpochRow::*, int EpochRow::*, double EpochRow::*> member;
};

// Every column in CSV order. The order is a user-facing contract: new columns go at the
// end (and get an EpochMetrics field of the same name and type).
const std::vector<EpochColumn>& EpochColumns();

// The CSV header line and a row, without trailing newline.
std::string EpochCsvHeader();
std::string EpochCsvLine(const EpochRow& row);

// What an epoch's row is built from. Saved in checkpoints, so an epoch resumed part way
// through ends with the row the uninterrupted epoch would have had.
struct EpochSums {
  std::vector<double> step_seconds;  // one per step so far
  double data_wait_s = 0;
  double allreduce_s = 0;
  double d_loss = 0;
  double g_loss = 0;
  int64_t skipped_g = 0;
  int64_t skipped_d = 0;
  double allreduce_hidden_s = 0;  // the part of allreduce_s behind backward (overlap; else 0)
  bool operator==(const EpochSums&) const = default;
};

class EpochAccumulator {
 public:
  // `sums`: the steps already done in this epoch (none for a fresh epoch).
  EpochAccumulator(int64_t batch_size, int64_t epoch, EpochSums sums = {})
      : batch_size_(batch_size), epoch_(epoch), sums_(std::move(sums)) {}

  // allreduce_exposed_seconds: the part of allreduce_seconds the step waited for (<0: all).
  void AddStep(double step_seconds, double data_wait_seconds, double allreduce_seconds, double d_loss,
               double g_loss, double allreduce_exposed_seconds = -1);
  // Counts the networks whose optimizer step was skipped in a step.
  void AddSkips(bool g_skipped, bool d_skipped) {
    sums_.skipped_g += g_skipped;
    sums_.skipped_d += d_skipped;
  }
  const EpochSums& sums() const { return sums_; }
  int64_t skipped_g() const { return sums_.skipped_g; }
  int64_t skipped_d() const { return sums_.skipped_d; }
  int64_t steps() const { return static_cast<int64_t>(sums_.step_seconds.size()); }
  double mean_d_loss() const { return steps() ? sums_.d_loss / steps() : 0.0; }
  double mean_g_loss() const { return steps() ? sums_.g_loss / steps() : 0.0; }
  // Samples per second over the most recent steps (up to `window`), for progress lines.
  double RecentSamplesPerSecond(size_t window = 20) const;

  // The row; the loss scales and peak_rss_mb are the caller's to fill in.
  EpochRow Finish(double epoch_seconds, int world_size = 1, int64_t straggler_flags = 0) const;

 private:
  int64_t batch_size_;
  int64_t epoch_;
  EpochSums sums_;
};

}  // namespace gantry
