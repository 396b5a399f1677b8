#include "worker/train/rank_step_report.h"

namespace gantry {

GroupStep SumRankReports(const std::vector<RankStepReport>& reports, const std::vector<double>& weights,
                         bool ranks_share_a_process) {
  GroupStep g;
  for (size_t i = 0; i < reports.size(); ++i) {
    const RankStepReport& r = reports[i];
    g.d_loss += weights[i] * r.d_loss;
    g.g_loss += weights[i] * r.g_loss;
    g.timings.push_back({r.data_wait_s, r.compute_s, r.allreduce_s});
    if (i == 0 || !ranks_share_a_process) {
      g.cpu_s += r.cpu_s;
      g.gpu_j += r.gpu_j;
    }
  }
  return g;
}

}  // namespace gantry
