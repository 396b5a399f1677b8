// Rate-limited progress lines while an epoch runs: batch, epoch, step, throughput over
// the recent steps, ETA of the epoch, and the running mean losses.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "worker/train/epoch_metrics.h"

namespace gantry {

class ProgressLine {
 public:
  // Prints at most once per interval_s (0: every call).
  ProgressLine(const Clock& clock, double interval_s);

  void MaybePrint(int64_t batch, int64_t epoch, int64_t epochs, int64_t step, int64_t steps,
                  const EpochAccumulator& acc);

 private:
  const Clock& clock_;
  double interval_s_;
  double last_;
};

// "42s", "3m07s", "1h05m".
std::string FormatDuration(double seconds);

}  // namespace gantry
