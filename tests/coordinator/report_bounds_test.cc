// A worker group's report carries numbers the coordinator stores, prints and plans with:
// each one outside what a run can produce (a rank outside the group, NaN or infinity, a
// negative time, an epoch or batch size outside the sweep) is refused with
// INVALID_ARGUMENT naming the field, and nothing of that report is stored.
#include <cmath>
#include <functional>
#include <limits>

#include "coordinator/validation/report_bounds.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CoordinatorFixture;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

v1::StragglerEvent Straggler(int rank) {
  v1::StragglerEvent e;
  e.set_batch_size(8);
  e.set_epoch(1);
  e.set_step(3);
  e.set_rank(rank);
  e.set_ratio(1.5);
  return e;
}

struct BadReport {
  const char* what;
  std::function<void(v1::ReportProgressRequest&)> spoil;
  const char* field;  // the message names it
};

std::vector<BadReport> BadReports() {
  return {
      {"straggler rank 99", [](auto& r) { *r.add_stragglers() = Straggler(99); }, "stragglers[0].rank: 99"},
      {"straggler rank -1", [](auto& r) { *r.add_stragglers() = Straggler(-1); }, "stragglers[0].rank: -1"},
      {"straggler rank = world size", [](auto& r) { *r.add_stragglers() = Straggler(2); }, "stragglers[0].rank: 2"},
      {"straggler ratio NaN",
       [](auto& r) {
         *r.add_stragglers() = Straggler(1);
         r.mutable_stragglers(0)->set_ratio(kNaN);
       },
       "stragglers[0].ratio"},
      {"straggler of another epoch",
       [](auto& r) {
         *r.add_stragglers() = Straggler(1);
         r.mutable_stragglers(0)->set_epoch(7);
       },
       "stragglers[0].epoch: 7"},
      {"progress d_loss NaN", [](auto& r) { r.mutable_progress()->set_d_loss(kNaN); }, "progress.d_loss"},
      {"progress g_loss -inf", [](auto& r) { r.mutable_progress()->set_g_loss(-kInf); }, "progress.g_loss"},
      {"progress samples/s inf", [](auto& r) { r.mutable_progress()->set_samples_per_s(kInf); },
       "progress.samples_per_s"},
      {"progress step -5", [](auto& r) { r.mutable_progress()->set_step(-5); }, "progress.step"},
      {"progress batch 3", [](auto& r) { r.mutable_progress()->set_batch_size(3); }, "progress.batch_size: 3"},
      {"epoch row loss NaN",
       [](auto& r) {
         *r.add_epochs() = testing::EpochRow(8, 1, 2);
         r.mutable_epochs(0)->set_g_loss(kNaN);
       },
       "epochs[0].g_loss"},
      {"epoch row energy inf",
       [](auto& r) {
         *r.add_epochs() = testing::EpochRow(8, 1, 2);
         r.mutable_epochs(0)->set_energy_j(kInf);
       },
       "epochs[0].energy_j"},
      {"rank timing of rank 4",
       [](auto& r) {
         v1::RankTiming* t = r.add_rank_timings();
         t->set_rank(4);
       },
       "rank_timings[0].rank: 4"},
      {"rank timing compute NaN",
       [](auto& r) {
         v1::RankTiming* t = r.add_rank_timings();
         t->set_rank(0);
         t->set_compute_ms(kNaN);
       },
       "rank_timings[0].compute_ms"},
  };
}

TEST(ReportBounds, ValuesNoRunProducesAreRefusedByFieldAndNothingIsStored) {
  CoordinatorFixture f("report_bounds");
  const std::string job = f.Submit({8}, 2, 2);
  const std::string group = f.Register(2);
  const v1::AcquireJobResponse acquired = f.Acquire(group);
  const absl::StatusOr<v1::JobReport> before = f.core().GetJobReport(job);
  ASSERT_TRUE(before.ok());
  for (const BadReport& bad : BadReports()) {
    v1::ReportProgressRequest report = testing::Report(group, acquired);
    bad.spoil(report);
    const absl::StatusOr<v1::ReportProgressResponse> reply = f.core().ReportProgress(report);
    EXPECT_TRUE(absl::IsInvalidArgument(reply.status())) << bad.what << ": " << reply.status();
    EXPECT_THAT(std::string(reply.status().message()), HasSubstr(bad.field)) << bad.what;
  }
  const absl::StatusOr<v1::JobReport> after = f.core().GetJobReport(job);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->ShortDebugString(), before->ShortDebugString());
  // What a run does produce goes through.
  v1::ReportProgressRequest good = testing::Report(group, acquired);
  *good.add_epochs() = testing::EpochRow(8, 1, 2);
  *good.add_stragglers() = Straggler(1);
  good.mutable_progress()->set_batch_size(8);
  good.mutable_progress()->set_epoch(2);
  good.mutable_progress()->set_d_loss(1.5);
  const absl::StatusOr<v1::ReportProgressResponse> taken = f.core().ReportProgress(good);
  EXPECT_TRUE(taken.ok()) << taken.status();
}

TEST(CheckFiniteFields, FindsNonFiniteValuesInNestedAndRepeatedFields) {
  v1::ReportProgressRequest report;
  EXPECT_TRUE(CheckFiniteFields(report, "").ok());
  report.add_epochs()->set_val_rel_l2(kNaN);
  const absl::Status s = CheckFiniteFields(report, "");
  EXPECT_THAT(std::string(s.message()), HasSubstr("epochs[0].val_rel_l2: nan is not a finite number"));
}

}  // namespace
}  // namespace gantry
