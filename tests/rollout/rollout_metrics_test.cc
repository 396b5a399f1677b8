#include <cmath>
#include <numbers>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "worker/rollout/rollout_metrics.h"
#include "worker/rollout/rollout_report.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(RolloutMetrics, RelativeL2) {
  const std::vector<float> truth = {3, 4, 0};
  const std::vector<float> pred = {3, 4, 5};
  EXPECT_DOUBLE_EQ(RelativeL2(pred.data(), truth.data(), 3), 1.0);  // ||(0,0,5)|| / ||(3,4,0)||
  EXPECT_DOUBLE_EQ(RelativeL2(truth.data(), truth.data(), 3), 0.0);
  const std::vector<float> zero = {0, 0, 0};
  EXPECT_TRUE(std::isinf(RelativeL2(pred.data(), zero.data(), 3)));
  EXPECT_EQ(RelativeL2(zero.data(), zero.data(), 3), 0.0);
}

TEST(RolloutMetrics, MaskedRelativeL2SplitsBandAndInterior) {
  // Two planes of 3 values; the mask selects the middle value of each plane.
  const std::vector<float> truth = {1, 2, 1, 1, 2, 1};
  const std::vector<float> pred = {1, 3, 1, 1, 1, 2};
  const std::vector<uint8_t> mask = {0, 1, 0};
  EXPECT_DOUBLE_EQ(RelativeL2Masked(pred.data(), truth.data(), 2, 3, mask, 1), std::sqrt(2.0 / 8.0));
  EXPECT_DOUBLE_EQ(RelativeL2Masked(pred.data(), truth.data(), 2, 3, mask, 0), std::sqrt(1.0 / 4.0));
}

TEST(RolloutMetrics, UncentredCorrelationIsTheCosine) {
  const std::vector<float> a = {1, 2, 3};
  const std::vector<float> twice = {2, 4, 6};
  const std::vector<float> shifted = {11, 12, 13};  // centred correlation would be 1
  const std::vector<float> orthogonal = {2, -1, 0};
  EXPECT_NEAR(UncentredCorrelation(a.data(), twice.data(), 3), 1.0, 1e-15);
  EXPECT_NEAR(UncentredCorrelation(a.data(), orthogonal.data(), 3), 0.0, 1e-15);
  EXPECT_NEAR(UncentredCorrelation(a.data(), shifted.data(), 3), 74.0 / std::sqrt(14.0 * 434.0), 1e-12);
  const std::vector<float> zero = {0, 0, 0};
  EXPECT_EQ(UncentredCorrelation(a.data(), zero.data(), 3), 0.0);
}

TEST(RolloutMetrics, FirstBelowTheThreshold) {
  EXPECT_EQ(FirstBelow({0.99, 0.97, 0.951, 0.94, 0.96}, 0.95), 3);
  EXPECT_EQ(FirstBelow({0.99, 0.98}, 0.95), std::nullopt);
  EXPECT_EQ(FirstBelow({0.99, NAN}, 0.95), 1);
}

// A blow-up: any non-finite value, or a norm beyond 10x the truth's (not at exactly 10x).
TEST(RolloutMetrics, BlowUpIsANonFiniteValueOrTenTimesTheTruthsNorm) {
  const std::vector<float> truth = {3, 4};
  EXPECT_FALSE(BlewUp(truth.data(), truth.data(), 2));
  const std::vector<float> ten = {30, 40}, beyond = {30, 40.01f};
  EXPECT_FALSE(BlewUp(ten.data(), truth.data(), 2));
  EXPECT_TRUE(BlewUp(beyond.data(), truth.data(), 2));
  const std::vector<float> nan = {NAN, 0}, inf = {0, INFINITY};
  EXPECT_TRUE(BlewUp(nan.data(), truth.data(), 2));
  EXPECT_TRUE(BlewUp(inf.data(), truth.data(), 2));
}

// --report-every K: rows of the multiples of K and the last step; the summary of every step.
TEST(RolloutReport, ReportEveryKeepsTheMultiplesAndTheLastStep) {
  std::vector<RolloutStepRow> rows;
  for (int64_t step = 1; step <= 7; ++step) rows.push_back({step, 0.01 * step, 0.99, 0.1});
  const std::string csv = RolloutCsv(rows, 3);
  EXPECT_EQ(csv.substr(csv.find('\n') + 1), "3,0.03,0.99,0.1,,,0\n6,0.06,0.99,0.1,,,0\n7,0.07,0.99,0.1,,,0\n");
  EXPECT_EQ(RolloutCsv(rows, 1), RolloutCsv(rows));
  const std::string md = RolloutMarkdown(rows, RolloutSummary{}, 3);
  EXPECT_THAT(md, AllOf(HasSubstr("7 step(s)"), HasSubstr("stayed >= 0.95 for all 7 steps"),
                        HasSubstr("the steps that are multiples of 3, and the last (--report-every 3)"), HasSubstr("| 6 | 0.0600 |"),
                        HasSubstr("| 7 | 0.0700 |")));
  EXPECT_THAT(md, ::testing::Not(HasSubstr("| 5 | 0.0500 |")));
}

TEST(RolloutReport, BothThresholdsAndTheBlowUpAreSummarised) {
  const std::vector<RolloutStepRow> rows = {{1, 0.05, 0.99, 0.2}, {2, 0.1, 0.9, 0.3}, {3, 0.5, 0.7, 0.3}};
  RolloutSummary s;
  s.horizon = 2;
  s.lattice_steps_per_frame = 10;
  s.first_below = 2;
  s.first_below_loose = 3;
  std::string md = RolloutMarkdown(rows, s);
  EXPECT_THAT(md, AllOf(HasSubstr("first below 0.95 at step 2 (40 lattice steps)"),
                        HasSubstr("first below 0.8 at step 3 (60 lattice steps)"),
                        HasSubstr("- no blow-up in 3 steps (no non-finite value, no field norm beyond 10x")));
  s.first_below_loose.reset();
  s.blow_up = 3;
  md = RolloutMarkdown(rows, s);
  EXPECT_THAT(md, AllOf(HasSubstr("stayed >= 0.8 for all 3 steps"), HasSubstr("- blew up at step 3 (a non-finite")));
}

// rollout.json: the marks the dashboard shows, null where a mark was not reached.
TEST(RolloutReport, SummaryJsonCarriesTheMarksAndNullForThoseNotReached) {
  const std::vector<RolloutStepRow> rows = {{1, 0.05, 0.99, 0.2}, {2, 0.1, 0.9, 0.3}, {3, 0.5, 0.7, 0.3}};
  RolloutSummary s;
  s.start_frame = 40;
  s.horizon = 2;
  s.first_below = 2;
  s.blow_up = 3;
  s.strouhal_true = 0.18;
  const nlohmann::json j = nlohmann::json::parse(RolloutSummaryJson(rows, s));
  EXPECT_EQ(j["steps"], 3);
  EXPECT_EQ(j["start_frame"], 40);
  EXPECT_EQ(j["horizon"], 2);
  EXPECT_EQ(j["threshold"], 0.95);
  EXPECT_EQ(j["first_below"], 2);
  EXPECT_EQ(j["loose_threshold"], 0.8);
  EXPECT_TRUE(j["first_below_loose"].is_null());
  EXPECT_EQ(j["blow_up"], 3);
  EXPECT_TRUE(j["strouhal_predicted"].is_null());
  EXPECT_EQ(j["strouhal_true"], 0.18);
}

TEST(RolloutReport, CsvAndMarkdownCarryEveryStepAndTheSummary) {
  std::vector<RolloutStepRow> rows = {{1, 0.05, 0.99, 0.2, 0.06, 0.04}, {2, 0.1, 0.94, 0.3, std::nullopt, std::nullopt}};
  const std::string csv = RolloutCsv(rows);
  EXPECT_THAT(csv, HasSubstr("step,relative_l2,vorticity_correlation,persistence_relative_l2,seam_relative_l2,"
                             "interior_relative_l2,spectrum_error\n1,0.05,0.99,0.2,0.06,0.04,0\n2,0.1,0.94,0.3,,,0\n"));
  RolloutSummary s;
  s.run = "runs/r";
  s.case_dir = "data/c";
  s.horizon = 1;
  s.lattice_steps_per_frame = 50;
  s.first_below = 2;
  s.strouhal_predicted = 0.18;
  s.strouhal_true = 0.2;
  s.tiling = "tile 64, overlap 16, gaussian blend, 6 tiles";
  s.ranks = 2;
  s.tiles_per_second = 12.5;
  const std::string md = RolloutMarkdown(rows, s);
  EXPECT_THAT(md, AllOf(HasSubstr("first below 0.95 at step 2 (100 lattice steps)"),
                        HasSubstr("predicted 0.1800, true 0.2000 (-10.0%)"), HasSubstr("12.5 tiles/s over 2 rank(s)"),
                        HasSubstr("| 2 | 0.1000 | 0.9400 | 0.3000 | - | - | 0.0000 |")));
}

}  // namespace
}  // namespace gantry
