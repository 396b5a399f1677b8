// SumRankReports: rank 0's view of the group's step.
#include "worker/train/rank_step_report.h"

#include <cmath>

#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(SumRankReports, WeighsLossesByShareAndCountsEachProcessOnce) {
  const std::vector<RankStepReport> reports = {{0.1, 1.0, 0.2, 0.5, 2.0, 3.0, 10.0},
                                               {0.3, 2.0, 0.4, 1.5, 4.0, 5.0, 20.0}};
  const std::vector<double> weights = {0.25, 0.75};
  const GroupStep processes = SumRankReports(reports, weights, /*ranks_share_a_process=*/false);
  EXPECT_DOUBLE_EQ(processes.d_loss, 0.25 * 0.5 + 0.75 * 1.5);
  EXPECT_DOUBLE_EQ(processes.g_loss, 0.25 * 2.0 + 0.75 * 4.0);
  EXPECT_DOUBLE_EQ(processes.cpu_s, 8.0);
  EXPECT_DOUBLE_EQ(processes.gpu_j, 30.0);
  ASSERT_EQ(processes.timings.size(), 2u);
  EXPECT_DOUBLE_EQ(processes.timings[1].compute_s, 2.0);
  EXPECT_DOUBLE_EQ(processes.timings[1].allreduce_wait_s, 0.4);
  // Threads of one process: rank 0's CPU and GPU counts are already the whole process's.
  const GroupStep threads = SumRankReports(reports, weights, /*ranks_share_a_process=*/true);
  EXPECT_DOUBLE_EQ(threads.cpu_s, 3.0);
  EXPECT_DOUBLE_EQ(threads.gpu_j, 10.0);
  EXPECT_DOUBLE_EQ(threads.d_loss, processes.d_loss);
}

TEST(SumRankReports, AnUnmeasuredGpuMakesTheGroupsJoulesUnknown) {
  const std::vector<RankStepReport> reports = {{0, 0, 0, 0, 0, 0, 10.0}, {0, 0, 0, 0, 0, 0, std::nan("")}};
  EXPECT_TRUE(std::isnan(SumRankReports(reports, {0.5, 0.5}, false).gpu_j));
}

}  // namespace
}  // namespace gantry
