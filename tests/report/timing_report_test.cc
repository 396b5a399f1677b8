#include "report/timing_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/energy_source.h"

namespace gantry {
namespace {

EpochRow Row(int64_t batch, int64_t epoch, double seconds, double samples_per_s) {
  EpochRow r;
  r.batch_size = batch;
  r.epoch = epoch;
  r.seconds = seconds;
  r.samples_per_s = samples_per_s;
  return r;
}

TEST(TimingReport, SummarizesPerBatchSizeAgainstTheSmallest) {
  // Rows arrive in run order; the largest batch first on purpose.
  const std::vector<EpochRow> rows = {Row(512, 1, 20, 3000), Row(512, 2, 22, 2800), Row(64, 1, 100, 600),
                                      Row(64, 2, 100, 600)};
  const auto s = SummarizeByBatchSize(rows);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].batch_size, 64);
  EXPECT_DOUBLE_EQ(s[0].total_seconds, 200);
  EXPECT_DOUBLE_EQ(s[0].change_vs_smallest, 0.0);
  EXPECT_EQ(s[1].batch_size, 512);
  EXPECT_DOUBLE_EQ(s[1].seconds_per_epoch, 21);
  EXPECT_DOUBLE_EQ(s[1].samples_per_s, 2900);
  EXPECT_NEAR(s[1].change_vs_smallest, -0.79, 1e-12);
}

TEST(TimingReport, MarkdownHasOneSummaryLinePerBatch) {
  EpochRow skipped = Row(128, 1, 60, 1000);
  skipped.loss_scale_g = 65536;
  skipped.loss_scale_d = 32768;
  skipped.skipped_steps_d = 1;
  skipped.peak_rss_mb = 321.4;
  const std::string md = TimingMarkdown({Row(64, 1, 100, 600), skipped}, 2, "bf16, dynamic loss scaling");
  EXPECT_THAT(md, ::testing::HasSubstr("(2 ranks, bf16, dynamic loss scaling)"));
  EXPECT_THAT(md, ::testing::HasSubstr("| 65536/32768 | 0/1 | 321 |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| 64 | 1 | 100.0 | 100.0 | 600.0 |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| -40.0 % |"));
  EXPECT_THAT(md, ::testing::Not(::testing::HasSubstr("## Energy")));  // no row measured any
}

TEST(TimingReport, PerEpochRowShowsTheLoadersWait) {
  // The loader's mean wait per step, beside the step's times (docs/images.md: at most 2 %).
  EpochRow r = Row(64, 1, 100, 600);
  r.steps = 10;
  r.steady_step_ms = 250;
  r.step_p50_ms = 240;
  r.step_p99_ms = 300;
  r.data_wait_ms = 1.25;
  const std::string md = TimingMarkdown({r}, 2);
  EXPECT_THAT(md, ::testing::HasSubstr("| p99 ms | data wait ms | samples/s |"));
  EXPECT_THAT(md, ::testing::HasSubstr("| 64 | 1 | 10 | 100.0 | 250.00 | 240.00 | 300.00 | 1.25 | 600.0 |"));
}

TEST(TimingReport, EnergyLinePerBatchSaysMeasuredOrEstimated) {
  EpochRow a = Row(64, 1, 100, 600), b = Row(64, 2, 100, 600), c = Row(512, 1, 20, 3000);
  a.steps = b.steps = 10;
  c.steps = 2;
  a.energy_j = 3000;
  b.energy_j = 600;
  c.energy_j = 1024;
  c.energy_estimated = 1;
  const std::string md = TimingMarkdown({a, b, c}, 1);
  EXPECT_THAT(md, ::testing::HasSubstr("## Energy"));
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 64: 3600 J (1.00 Wh) over 1280 samples, 2.8125 J/sample "
                                       "(measured: RAPL)"));
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 512: 1024 J (0.28 Wh) over 1024 samples, 1.0000 J/sample "
                                       "(estimated: CPU seconds x --watts-per-core)"));
  EXPECT_THAT(md, ::testing::HasSubstr("| 1024 (est.) |"));
  EXPECT_THAT(md, ::testing::Not(::testing::HasSubstr("## Sample quality")));
}

TEST(TimingReport, EnergyLineNamesNvmlAndMixedSources) {
  EpochRow a = Row(64, 1, 100, 600), b = Row(64, 2, 100, 600), c = Row(512, 1, 20, 3000);
  a.steps = b.steps = c.steps = 2;
  a.energy_j = 300;
  a.energy_source = static_cast<int>(EnergySource::kNvml);
  b.energy_j = 100;  // its GPU counter failed: estimated
  b.energy_estimated = 1;
  b.energy_source = static_cast<int>(EnergySource::kEstimate);
  c.energy_j = 512;
  c.energy_source = static_cast<int>(EnergySource::kNvml);
  const std::string md = TimingMarkdown({a, b, c}, 1);
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 512: 512 J (0.14 Wh) over 1024 samples, 0.5000 J/sample "
                                       "(measured: NVML, the GPUs)"));
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 64: 400 J (0.11 Wh) over 256 samples, 1.5625 J/sample "
                                       "(mixed: estimated: CPU seconds x --watts-per-core; measured: NVML, the GPUs)"));
}

TEST(TimingReport, QualityLinePerScoredEpoch) {
  EpochRow a = Row(64, 1, 100, 600), b = Row(64, 2, 100, 600);
  b.quality_fd = 3.25;
  b.quality_class_entropy = 0.5;
  b.quality_marginal_entropy = 2.25;
  b.quality_confidence = 0.875;
  const std::string md = TimingMarkdown({a, b}, 1);
  EXPECT_THAT(md, ::testing::HasSubstr("## Sample quality"));
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 64 epoch 2: Fréchet distance 3.250, class entropy 0.500 (per "
                                       "sample) / 2.250 (of the mean), confidence 0.875\n"));
  EXPECT_THAT(md, ::testing::Not(::testing::HasSubstr("epoch 1: Fréchet")));
}

TEST(TimingReport, QualityLineHasTheKidWhereTheEpochHasOne) {
  // The label-free score: a Fréchet distance and a KID, no judge (its columns -1).
  EpochRow a = Row(64, 1, 100, 600), b = Row(64, 2, 100, 600);
  a.quality_fd = 20.5;
  a.quality_kid = -0.000125;
  b.quality_fd = 3.25;
  b.quality_class_entropy = 0.5;
  b.quality_marginal_entropy = 2.25;
  b.quality_confidence = 0.875;
  b.quality_kid = 0.0625;
  const std::string md = TimingMarkdown({a, b}, 1);
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 64 epoch 1: Fréchet distance 20.500, KID -0.000125\n"));
  EXPECT_THAT(md, ::testing::HasSubstr("- global batch 64 epoch 2: Fréchet distance 3.250, class entropy 0.500 (per "
                                       "sample) / 2.250 (of the mean), confidence 0.875, KID 0.0625\n"));
}

}  // namespace
}  // namespace gantry
