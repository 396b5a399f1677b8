#include "worker/pool/metrics_proto.h"

#include "gtest/gtest.h"
#include "report/epoch_row_proto.h"

namespace gantry {
namespace {

// Every column distinct and with digits past the CSV's rounding.
EpochRow FullRow() {
  EpochRow r;
  r.batch_size = 256;
  r.epoch = 3;
  r.steps = 234;
  r.seconds = 61.23456789;
  r.steady_step_ms = 250.1234567;
  r.samples_per_s = 1023.456789;
  r.d_loss = 1.23456789;
  r.g_loss = 0.87654321;
  r.step_p50_ms = 249.87654;
  r.step_p99_ms = 301.2345;
  r.data_wait_ms = 0.4567891;
  r.world_size = 4;
  r.allreduce_ms = 12.3456789;
  r.allreduce_share = 0.04936789;
  r.straggler_flags = 5;
  r.loss_scale_g = 32768;
  r.loss_scale_d = 0.0009765625;
  r.skipped_steps_g = 2;
  r.skipped_steps_d = 7;
  r.peak_rss_mb = 987.6543;
  return r;
}

TEST(MetricsProto, AnEpochRowTravelsWithEveryColumnIntact) {
  const EpochRow row = FullRow();
  const EpochRow back = FromEpochMetrics(ToEpochMetrics(row));
  EXPECT_EQ(EpochCsvLine(back), EpochCsvLine(row));
  EXPECT_EQ(back.seconds, row.seconds) << "doubles are not rounded on the way";
  EXPECT_EQ(back.loss_scale_d, row.loss_scale_d);
  EXPECT_EQ(back.skipped_steps_d, row.skipped_steps_d);
  EXPECT_EQ(back.peak_rss_mb, row.peak_rss_mb);
}

TEST(MetricsProto, StragglersProgressAndTimings) {
  const StragglerEvent e{.step = 140, .rank = 1, .window_steps = 20, .rank_compute_ms = 182.4,
                         .median_compute_ms = 79.0, .ratio = 2.31};
  const v1::StragglerEvent m = ToStragglerEvent(e, 64, 2);
  EXPECT_EQ(m.batch_size(), 64);
  EXPECT_EQ(m.epoch(), 2);
  EXPECT_EQ(m.step(), 140);
  EXPECT_EQ(m.rank(), 1);
  EXPECT_EQ(m.window_steps(), 20);
  EXPECT_DOUBLE_EQ(m.ratio(), 2.31);
  const v1::Progress p = ToProgress({.batch_size = 64, .epoch = 2, .step = 5, .steps_in_epoch = 9,
                                     .global_step = 14, .samples_per_s = 300, .d_loss = 1.25, .g_loss = 0.5});
  EXPECT_EQ(p.steps_per_epoch(), 9);
  EXPECT_EQ(p.global_step(), 14);
  EXPECT_DOUBLE_EQ(p.g_loss(), 0.5);
  const std::vector<v1::RankTiming> t = ToRankTimings(
      {{.rank = 1, .share = 40, .window_steps = 20, .median = {.data_wait_s = 0.001, .compute_s = 0.25,
                                                               .allreduce_wait_s = 0.01}}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].share(), 40);
  EXPECT_DOUBLE_EQ(t[0].compute_ms(), 250);
  EXPECT_DOUBLE_EQ(t[0].allreduce_ms(), 10);
}

}  // namespace
}  // namespace gantry
