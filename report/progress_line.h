// Rate-limited progress lines while an epoch runs: batch, precision, epoch, step,
// throughput over the recent steps, ETA of the epoch, the running mean losses, and the
// steps skipped by loss scaling so far in the epoch (when there were any).
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "report/epoch_metrics.h"

namespace gantry {

class ProgressLine {
 public:
  // Prints at most once per interval_s (0: every call). `precision` is shown as given
  // (DescribePrecision).
  ProgressLine(const Clock& clock, double interval_s, std::string precision = "fp32");

  void MaybePrint(int64_t batch, int64_t epoch, int64_t epochs, int64_t step, int64_t steps,
                  const EpochAccumulator& acc);

 private:
  const Clock& clock_;
  double interval_s_;
  double last_;
  std::string precision_;
};

// "42s", "3m07s", "1h05m".
std::string FormatDuration(double seconds);

}  // namespace gantry
