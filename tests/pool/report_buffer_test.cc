#include "worker/pool/report_buffer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

v1::EpochMetrics Row(int64_t batch, int64_t epoch) {
  v1::EpochMetrics row;
  row.set_batch_size(batch);
  row.set_epoch(epoch);
  row.set_seconds(1.5 * static_cast<double>(epoch));
  return row;
}

v1::StragglerEvent Event(int64_t step) {
  v1::StragglerEvent e;
  e.set_step(step);
  e.set_rank(1);
  return e;
}

v1::Progress Progress(int64_t step) {
  v1::Progress p;
  p.set_step(step);
  return p;
}

std::vector<int64_t> Epochs(const ReportBatch& batch) {
  std::vector<int64_t> epochs;
  for (const v1::EpochMetrics& row : batch.request.epochs()) epochs.push_back(row.epoch());
  return epochs;
}

std::vector<int64_t> Steps(const ReportBatch& batch) {
  std::vector<int64_t> steps;
  for (const v1::StragglerEvent& e : batch.request.stragglers()) steps.push_back(e.step());
  return steps;
}

TEST(ReportBuffer, EmptyUntilSomethingIsAdded) {
  ReportBuffer buffer;
  EXPECT_TRUE(buffer.Take().empty());
  EXPECT_TRUE(buffer.Drained());
  EXPECT_FALSE(buffer.HasUrgent());
}

TEST(ReportBuffer, AFailedReportIsTakenAgainWhole) {
  ReportBuffer buffer;
  buffer.AddEpochRow(Row(64, 1), {});
  buffer.AddStraggler(Event(7));
  const ReportBatch first = buffer.Take();  // never acknowledged: the call failed
  buffer.AddEpochRow(Row(64, 2), {});
  const ReportBatch second = buffer.Take();
  EXPECT_THAT(Epochs(first), ::testing::ElementsAre(1));
  EXPECT_THAT(Epochs(second), ::testing::ElementsAre(1, 2));
  EXPECT_THAT(Steps(second), ::testing::ElementsAre(7));
  buffer.Acknowledge(second);
  EXPECT_TRUE(buffer.Drained());
  EXPECT_TRUE(buffer.Take().empty());
}

TEST(ReportBuffer, AcknowledgingKeepsWhatCameAfterTheTake) {
  ReportBuffer buffer;
  buffer.AddEpochRow(Row(64, 1), {});
  const ReportBatch taken = buffer.Take();
  buffer.AddEpochRow(Row(64, 2), {});
  buffer.AddStraggler(Event(9));
  buffer.Acknowledge(taken);
  const ReportBatch next = buffer.Take();
  EXPECT_THAT(Epochs(next), ::testing::ElementsAre(2));
  EXPECT_THAT(Steps(next), ::testing::ElementsAre(9));
}

TEST(ReportBuffer, RowsCarryTheLatestRankTimings) {
  ReportBuffer buffer;
  v1::RankTiming t;
  t.set_rank(0);
  t.set_share(32);
  buffer.AddEpochRow(Row(64, 1), {t});
  t.set_share(40);
  buffer.AddEpochRow(Row(64, 2), {t});
  const ReportBatch batch = buffer.Take();
  ASSERT_EQ(batch.request.rank_timings_size(), 1);
  EXPECT_EQ(batch.request.rank_timings(0).share(), 40);
  buffer.Acknowledge(batch);
  buffer.SetProgress(Progress(3));
  EXPECT_EQ(buffer.Take().request.rank_timings_size(), 0) << "timings go with rows only";
}

TEST(ReportBuffer, ProgressIsTheLatestAndSentUntilAcknowledged) {
  ReportBuffer buffer;
  buffer.SetProgress(Progress(1));
  buffer.SetProgress(Progress(2));
  const ReportBatch batch = buffer.Take();
  EXPECT_EQ(batch.request.progress().step(), 2);
  EXPECT_FALSE(buffer.HasUrgent()) << "progress waits for the interval";
  EXPECT_TRUE(buffer.Drained()) << "progress does not hold up a drain";
  EXPECT_TRUE(buffer.Take().request.has_progress()) << "not acknowledged yet";
  buffer.Acknowledge(batch);
  EXPECT_FALSE(buffer.Take().request.has_progress());
  buffer.SetProgress(Progress(3));
  EXPECT_EQ(buffer.Take().request.progress().step(), 3);
}

TEST(ReportBuffer, ProgressNewerThanAnAcknowledgedReportIsStillSent) {
  ReportBuffer buffer;
  buffer.SetProgress(Progress(1));
  const ReportBatch old = buffer.Take();
  buffer.SetProgress(Progress(2));
  buffer.Acknowledge(old);
  EXPECT_EQ(buffer.Take().request.progress().step(), 2);
}

TEST(ReportBuffer, StragglersAreBoundedOldestFirstButRowsNeverDrop) {
  ReportBuffer buffer(ReportBufferLimits{.max_stragglers = 3, .max_items = 100});
  for (int64_t step = 1; step <= 5; ++step) buffer.AddStraggler(Event(step));
  for (int64_t epoch = 1; epoch <= 50; ++epoch) buffer.AddEpochRow(Row(8, epoch), {});
  const ReportBatch batch = buffer.Take();
  EXPECT_THAT(Steps(batch), ::testing::ElementsAre(3, 4, 5));
  EXPECT_EQ(buffer.dropped_stragglers(), 2);
  EXPECT_EQ(batch.request.epochs_size(), 50);
}

TEST(ReportBuffer, LargeBacklogsGoOutInSeveralReportsWithTheFinalStateLast) {
  ReportBuffer buffer(ReportBufferLimits{.max_stragglers = 10, .max_items = 2});
  for (int64_t epoch = 1; epoch <= 5; ++epoch) buffer.AddEpochRow(Row(8, epoch), {});
  buffer.SetFinal(v1::JOB_STATE_SUCCEEDED);
  std::vector<int64_t> sent;
  int reports = 0;
  while (!buffer.Drained()) {
    ASSERT_LT(++reports, 10);
    const ReportBatch batch = buffer.Take();
    for (int64_t e : Epochs(batch)) sent.push_back(e);
    EXPECT_EQ(batch.has_final, sent.size() == 5) << "the final state only with or after the last row";
    buffer.Acknowledge(batch);
  }
  EXPECT_THAT(sent, ::testing::ElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(reports, 3);
  EXPECT_TRUE(buffer.final_delivered());
}

TEST(ReportBuffer, TheFinalStateIsUrgentUntilDelivered) {
  ReportBuffer buffer;
  buffer.SetFinal(v1::JOB_STATE_FAILED, "loss is not finite");
  EXPECT_TRUE(buffer.HasUrgent());
  EXPECT_FALSE(buffer.Drained());
  const ReportBatch batch = buffer.Take();
  EXPECT_EQ(batch.request.final_state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(batch.request.error(), "loss is not finite");
  buffer.Acknowledge(batch);
  EXPECT_TRUE(buffer.Drained());
  EXPECT_TRUE(buffer.Take().empty());
}

}  // namespace
TEST(ReportBuffer, TheCheckpointIsTheLatestAndGoesOutUntilAcknowledged) {
  ReportBuffer buffer;
  v1::CheckpointRef ref;
  ref.set_run_folder("/runs/job-1");
  ref.set_run_step(4);
  buffer.SetCheckpoint(ref);
  ref.set_run_step(8);
  buffer.SetCheckpoint(ref);
  const ReportBatch failed = buffer.Take();
  ASSERT_TRUE(failed.request.has_checkpoint());
  EXPECT_TRUE(buffer.HasUrgent());
  EXPECT_FALSE(buffer.Drained()) << "a stopping pool flushes its newest checkpoint";
  EXPECT_EQ(failed.request.checkpoint().run_step(), 8);
  EXPECT_FALSE(failed.empty());
  const ReportBatch again = buffer.Take();  // the first report failed: not acknowledged
  EXPECT_EQ(again.request.checkpoint().run_step(), 8);
  buffer.Acknowledge(again);
  EXPECT_FALSE(buffer.Take().request.has_checkpoint());
  EXPECT_TRUE(buffer.Drained());
  EXPECT_FALSE(buffer.HasUrgent());
  ref.set_run_step(12);
  buffer.SetCheckpoint(ref);
  EXPECT_EQ(buffer.Take().request.checkpoint().run_step(), 12);
}

}  // namespace gantry
