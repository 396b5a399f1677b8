// /metrics of a populated coordinator, byte for byte: jobs in every state, groups idle,
// busy and lost, an active job with every per-job series (progress, epoch rows, loss
// scales, skipped steps, stragglers, a scored epoch, measured energy), a cancelling one,
// and RPC counts. Prometheus users' dashboards and alerts read these names, labels and
// help texts, so any change to the text shows here first.
//
// The expected text is tests/coordinator/metrics_golden.txt. On a difference the test
// writes what it got beside its temporary files and names that file: after a deliberate
// change to /metrics, review the diff and copy it over the golden file.
#include <fstream>
#include <sstream>

#include "coordinator/http/monitor_api.h"
#include "coordinator/service/rpc_metrics.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

constexpr char kGoldenPath[] = GANTRY_SOURCE_DIR "/tests/coordinator/metrics_golden.txt";

v1::Progress ProgressAt(int64_t batch_size, int64_t step, double samples_per_s) {
  v1::Progress p;
  p.set_batch_size(batch_size);
  p.set_epoch(1);
  p.set_step(step);
  p.set_steps_per_epoch(125);
  p.set_global_step(step);
  p.set_samples_per_s(samples_per_s);
  p.set_d_loss(1.25);
  p.set_g_loss(0.625);
  return p;
}

// The active job's report: two epoch rows of batch 8 (the second scored by the judge and
// with a KID, with RAPL energy, loss scaling and skipped steps), stragglers of ranks 0 and 1, and
// progress in batch 16.
v1::ReportProgressRequest FullReport(const std::string& group, const v1::AcquireJobResponse& acquired) {
  v1::ReportProgressRequest report = testing::Report(group, acquired);
  v1::EpochMetrics first = testing::EpochRow(8, 1, 2);
  first.set_quality_fd(-1);
  first.set_energy_j(120.5);
  first.set_energy_source(2);
  v1::EpochMetrics second = testing::ScoredEpochRow(8, 2, 2);
  second.set_loss_scale_g(32768);
  second.set_loss_scale_d(0.5);
  second.set_skipped_steps_g(3);
  second.set_skipped_steps_d(1);
  second.set_energy_source(2);
  second.mutable_quality_kid()->set_value(0.0625);
  *report.add_epochs() = first;
  *report.add_epochs() = second;
  for (int rank : {1, 1, 0}) {
    v1::StragglerEvent* e = report.add_stragglers();
    e->set_batch_size(8);
    e->set_epoch(1);
    e->set_step(report.stragglers_size());
    e->set_rank(rank);
    e->set_ratio(1.5 + rank);
  }
  *report.mutable_progress() = ProgressAt(16, 40, 320);
  return report;
}

// Groups: busy (the active job), busy (the cancelling one), idle, lost. Jobs: running,
// cancelling, queued, succeeded, failed, cancelled.
std::string PopulatedMetricsText() {
  CoordinatorOptions options;
  options.lease_seconds = 30;
  testing::CoordinatorFixture f("metrics_golden", options);
  Coordinator& core = f.core();
  const std::string lost = f.Register(1);
  f.clock().AdvanceMillis(20'000);

  // job-1 succeeds and job-2 fails on the idle group-to-be.
  const std::string idle = f.Register(1);
  for (v1::JobState end : {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_FAILED}) {
    f.Submit({8}, 1, 1);
    v1::ReportProgressRequest done = testing::Report(idle, f.Acquire(idle));
    done.set_final_state(end);
    if (end == v1::JOB_STATE_FAILED) done.set_error("out of memory");
    EXPECT_TRUE(core.ReportProgress(done).ok());
  }
  // job-3 runs on a 2-rank group with a full report; its name needs escaping.
  v1::SubmitJobRequest named = testing::SweepRequest(f.data_dir(), {8, 16}, 2, 2);
  named.set_name("a \"quoted\" \\ name");
  EXPECT_TRUE(core.SubmitJob(named).ok());
  const std::string busy = f.Register(2);
  EXPECT_TRUE(core.ReportProgress(FullReport(busy, f.Acquire(busy))).ok());
  // job-4 runs on a 3-rank group and is being cancelled.
  const std::string job4 = f.Submit({16}, 1, 3);
  const std::string stopping = f.Register(3);
  v1::ReportProgressRequest progress = testing::Report(stopping, f.Acquire(stopping));
  *progress.mutable_progress() = ProgressAt(16, 2, 100);
  EXPECT_TRUE(core.ReportProgress(progress).ok());
  EXPECT_TRUE(core.CancelJob(job4).ok());
  // job-5 is cancelled while queued; job-6 waits for a 4-rank group.
  EXPECT_TRUE(core.CancelJob(f.Submit({8}, 1, 4)).ok());
  f.Submit({8}, 1, 4);

  // The first group goes silent past its lease; the others call in time.
  f.clock().AdvanceMillis(15'000);
  for (const std::string& group : {idle, busy, stopping}) {
    v1::HeartbeatRequest beat;
    beat.set_group_id(group);
    EXPECT_TRUE(core.Heartbeat(beat).ok());
  }
  f.clock().AdvanceMillis(2'500);
  EXPECT_EQ(core.ExpireLeases(), 1);

  RpcMetrics rpc;
  rpc.Record("/gantry.v1.Coordinator/SubmitJob", 0, 0.002);
  rpc.Record("/gantry.v1.Coordinator/SubmitJob", 3, 0.0004);
  rpc.Record("/gantry.v1.Coordinator/AcquireJob", 0, 12.0);
  rpc.Record("/grpc.health.v1.Health/Check", 0, 0.0001);
  rpc.Record("/unknown.Service/Method", 12, 0.01);
  MonitorApi api(core, &rpc);
  absl::StatusOr<std::string> text = api.MetricsText();
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

TEST(MetricsGolden, PopulatedCoordinatorPrintsTheRecordedText) {
  const std::string text = PopulatedMetricsText();
  ASSERT_FALSE(text.empty());
  std::ifstream in(kGoldenPath, std::ios::binary);
  std::stringstream golden;
  golden << in.rdbuf();
  if (text == golden.str()) return;
  const std::string actual = ::testing::TempDir() + "metrics_actual.txt";
  std::ofstream(actual, std::ios::binary) << text;
  ADD_FAILURE() << "/metrics differs from " << kGoldenPath << "; what it printed is in " << actual
                << " (diff the two; after a deliberate change, copy it over the golden file)";
}

}  // namespace
}  // namespace gantry
