// What each rank reports to rank 0 after every step (a fixed-size record, gathered),
// and rank 0's view of the group's step from those reports.
#pragma once

#include <vector>

#include "common/straggler_tracker.h"

namespace gantry {

struct RankStepReport {
  double data_wait_s;
  double compute_s;
  double allreduce_s;
  double d_loss;
  double g_loss;
  double cpu_s;  // CPU seconds of the rank's process since its previous report (energy estimate)
  // Joules of the rank's GPU (NVML) in the epoch, on its last step; 0 on the others,
  // NaN where the rank could not read its counter.
  double gpu_j;
};

struct GroupStep {
  double d_loss = 0;  // the whole batch's losses: each rank's weighted by its share
  double g_loss = 0;
  std::vector<StepTiming> timings;  // per rank
  double cpu_s = 0;   // CPU seconds of the group's processes
  double gpu_j = 0;   // GPU joules of the group (NaN: some rank's unmeasured)
};

// `weights` are the ranks' shares of the global batch (summing to 1). Ranks that are
// threads of one process (`ranks_share_a_process`) share its CPU and GPU counts, so only
// rank 0's are added.
GroupStep SumRankReports(const std::vector<RankStepReport>& reports, const std::vector<double>& weights,
                         bool ranks_share_a_process);

}  // namespace gantry
