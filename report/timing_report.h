// The batch-size timing summary of a run (timing.md, also printed at the end): per
// global batch size the total and per-epoch training time, the steady-state samples/s,
// and the change in total training time relative to the smallest batch size — the
// comparison of the paper's Table 2 (which saw -79 % from batch 64 to 512 on a TPU).
#pragma once

#include <string>
#include <vector>

#include <set>

#include "report/epoch_metrics.h"

namespace gantry {

struct BatchSizeSummary {
  int64_t batch_size = 0;
  int64_t epochs = 0;
  double total_seconds = 0;
  double seconds_per_epoch = 0;
  double samples_per_s = 0;     // mean of the epochs' steady-state samples/s
  double allreduce_share = 0;   // mean over epochs
  double change_vs_smallest = 0;  // total_seconds / smallest batch's total_seconds - 1
  double energy_j = 0;          // sum over epochs (0: not measured)
  int64_t samples = 0;          // steps x batch size, over epochs
  bool energy_estimated = false;  // some epoch's energy is an estimate
  std::set<int> energy_sources;   // where its epochs' energy comes from (EnergySource codes)
};

// One summary per batch size, in ascending batch size.
std::vector<BatchSizeSummary> SummarizeByBatchSize(const std::vector<EpochRow>& rows);

// timing.md: a title line (ranks and `precision`, see DescribePrecision), the summary
// table, the energy per batch size (when the rows have it) and the per-epoch table, in
// Markdown.
std::string TimingMarkdown(const std::vector<EpochRow>& rows, int world_size, const std::string& precision = "fp32");

}  // namespace gantry
