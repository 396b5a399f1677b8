#include "report/epoch_metrics.h"

#include <limits>
#include <type_traits>

#include "gtest/gtest.h"
#include "report/energy_source.h"

namespace gantry {
namespace {

TEST(EpochAccumulator, SteadyStateLeavesOutRamps) {
  EpochAccumulator acc(/*batch_size=*/100, /*epoch=*/2);
  for (int i = 0; i < 10; ++i) {
    const double step = (i == 0 || i == 9) ? 1.0 : 0.1;  // slow first and last step
    acc.AddStep(step, 0.01, step / 4, 1.0 + i, 2.0);
  }
  acc.AddSkips(/*g_skipped=*/false, /*d_skipped=*/true);
  acc.AddSkips(/*g_skipped=*/true, /*d_skipped=*/true);
  acc.AddSkips(false, false);
  const EpochRow row = acc.Finish(3.0, /*world_size=*/2, /*straggler_flags=*/3);
  EXPECT_EQ(row.steps, 10);
  EXPECT_EQ(row.epoch, 2);
  EXPECT_NEAR(row.steady_step_ms, 100.0, 1e-9);
  EXPECT_NEAR(row.samples_per_s, 1000.0, 1e-6);
  EXPECT_NEAR(row.d_loss, 5.5, 1e-12);
  EXPECT_NEAR(row.g_loss, 2.0, 1e-12);
  EXPECT_NEAR(row.data_wait_ms, 10.0, 1e-9);
  EXPECT_NEAR(row.step_p50_ms, 100.0, 1e-9);
  EXPECT_GT(row.step_p99_ms, 900.0);
  EXPECT_EQ(row.world_size, 2);
  EXPECT_EQ(row.straggler_flags, 3);
  EXPECT_NEAR(row.allreduce_share, 0.25, 1e-9);
  EXPECT_NEAR(row.allreduce_ms, 250.0 * 2.8 / 10.0 * 1.0, 1e-9);  // (2 x 1 s + 8 x 0.1 s) / 4 / 10 steps
  EXPECT_NEAR(row.allreduce_exposed_ms, row.allreduce_ms, 1e-9) << "no overlap: all of it exposed";
  EXPECT_EQ(row.skipped_steps_g, 1);
  EXPECT_EQ(row.skipped_steps_d, 2);
}

TEST(EpochCsv, NewColumnsComeLastInTheirOrder) {
  const std::string header = EpochCsvHeader();
  EXPECT_TRUE(header.starts_with("batch_size,epoch,seconds,steady_step_ms,samples_per_s,d_loss,g_loss,steps,"
                                 "step_p50_ms,step_p99_ms,data_wait_ms,world_size,allreduce_ms,allreduce_share,"
                                 "straggler_flags,"))
      << header;
  EXPECT_NE(header.find(",loss_scale_g,loss_scale_d,skipped_steps_g,skipped_steps_d,peak_rss_mb,"), std::string::npos)
      << header;
  EXPECT_NE(header.find(",peak_rss_mb,energy_j,energy_j_per_sample,energy_estimated,"), std::string::npos) << header;
  EXPECT_TRUE(header.ends_with(",energy_estimated,quality_fd,quality_class_entropy,quality_marginal_entropy,"
                               "quality_confidence,val_l1,val_rel_l2,energy_source,val_persistence_l1,val_persistence_rel_l2,"
                               "quality_kid,allreduce_exposed_ms"))
      << header;
  EpochRow row;
  row.loss_scale_g = 1048576;
  row.loss_scale_d = 0.5;
  row.skipped_steps_g = 2;
  row.skipped_steps_d = 7;
  row.peak_rss_mb = 123.44;
  row.energy_j = 1234.56;
  row.energy_j_per_sample = 0.0123456789;
  row.energy_estimated = 1;
  row.quality_fd = 12.34567;
  row.quality_confidence = 0.875;
  row.val_l1 = 0.0125;
  row.val_rel_l2 = 0.5;
  row.energy_source = static_cast<int>(EnergySource::kNvml);
  row.val_persistence_l1 = 0.25;
  row.val_persistence_rel_l2 = 0.75;
  // No KID: nan (not -1, which an unbiased KID near 0 could be mistaken for).
  EXPECT_TRUE(EpochCsvLine(row).ends_with(
      ",1048576,0.5,2,7,123.4,1234.6,0.0123457,1,12.3457,-1.0000,-1.0000,0.8750,0.01250,0.50000,3,0.25000,0.75000,nan,"
      "0.000"))
      << EpochCsvLine(row);
  row.quality_kid = -0.000125;  // an unbiased estimate a little below 0
  EXPECT_TRUE(EpochCsvLine(row).ends_with(",0.75000,-0.000125,0.000")) << EpochCsvLine(row);
  row.quality_kid = 0.0123456789;
  EXPECT_TRUE(EpochCsvLine(row).ends_with(",0.75000,0.0123457,0.000")) << EpochCsvLine(row);
  row.allreduce_exposed_ms = 12.3456;
  EXPECT_TRUE(EpochCsvLine(row).ends_with(",0.0123457,12.346")) << EpochCsvLine(row);
}

TEST(EpochMetrics, OverlappedStepsCountOnlyTheirExposedPartAsExposed) {
  EpochAccumulator acc(/*batch_size=*/64, /*epoch=*/1);
  acc.AddStep(0.1, 0.0, /*allreduce_seconds=*/0.08, 1.0, 1.0, /*allreduce_exposed_seconds=*/0.02);
  acc.AddStep(0.1, 0.0, /*allreduce_seconds=*/0.06, 1.0, 1.0, /*allreduce_exposed_seconds=*/0.0);
  EXPECT_NEAR(acc.sums().allreduce_hidden_s, 0.12, 1e-12);
  const EpochRow row = acc.Finish(0.2, /*world_size=*/2);
  EXPECT_NEAR(row.allreduce_ms, 70.0, 1e-9);
  EXPECT_NEAR(row.allreduce_exposed_ms, 10.0, 1e-9);
}

TEST(EpochRow, RowsAreEqualColumnByColumnAndANanMatchesANan) {
  EpochRow a, b;
  EXPECT_EQ(a, b);  // quality_kid NaN in both: the same row
  b.d_loss = b.quality_kid = std::numeric_limits<double>::quiet_NaN();
  a.d_loss = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(a, b);
  // A difference in any one column makes them differ.
  for (const EpochColumn& column : EpochColumns()) {
    EpochRow c = a;
    std::visit([&](auto member) { c.*member = static_cast<std::remove_reference_t<decltype(c.*member)>>(42); },
               column.member);
    EXPECT_NE(c, a) << column.name;
  }
}

TEST(EpochCsv, LineHasAColumnPerHeaderField) {
  const std::string header = EpochCsvHeader();
  const std::string line = EpochCsvLine(EpochRow{});
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(line.begin(), line.end(), ','));
}

}  // namespace
}  // namespace gantry
