// End to end on loopback: the gantry-coordinator binary, the gantry CLI, and a fake
// worker group (a gRPC client playing rank 0) running a job to the end, and cancelling
// one mid-run.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/report_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/process_harness.h"
#include "report/timing_report.h"
#include "report/epoch_row_proto.h"
#include "report/epoch_table.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

std::string SubmitSweep(int port, const testing::Folders& s) {
  const CommandResult r = RunCommand(Gantry(port, "--json submit --dataset mnist --data-dir " + s.data +
                                                      " --batch-size 8,16 --epochs 2 --world-size 2 --seed 3 --name e2e"),
                                     30, /*with_stderr=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output).at("id").get<std::string>();
}

// The last line of the worker's end-of-run table for one row: what `gantry watch` prints.
std::string WatchLine(const v1::EpochMetrics& row) {
  const std::string table = FormatEpochTable({FromEpochMetrics(row)});
  const std::string trimmed = table.substr(0, table.size() - 1);
  return trimmed.substr(trimmed.rfind('\n') + 1);
}

TEST(CoordinatorEndToEnd, ASweepRunsToTheEndAndTheReportMatches) {
  const testing::Folders s = testing::MakeFolders("e2e_run");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string id = SubmitSweep(port, s);

  CommandResult watched;
  std::thread watcher([&] { watched = RunCommand(Gantry(port, "watch " + id + " --for 60"), 90, false); });

  testing::FakeWorkerGroup group(coordinator.address(), 2);
  ASSERT_TRUE(group.Register().ok());
  ASSERT_TRUE(group.AcquireJob(20));
  EXPECT_EQ(group.acquired().job().id(), id);
  EXPECT_EQ(group.acquired().plan().batch_size(), 8);
  EXPECT_EQ(group.acquired().plan().seed(), 3u);
  std::vector<v1::EpochMetrics> rows;
  for (int64_t batch : {8, 16}) {
    for (int64_t epoch : {1, 2}) {
      rows.push_back(testing::EpochRow(batch, epoch, 2));
      v1::ReportProgressResponse reply;
      ASSERT_TRUE(group.ReportEpoch(rows.back(), &reply).ok());
      EXPECT_FALSE(reply.cancel());
    }
  }
  v1::ReportProgressRequest straggler;
  v1::StragglerEvent* e = straggler.add_stragglers();
  e->set_batch_size(16);
  e->set_epoch(2);
  e->set_step(40);
  e->set_rank(1);
  e->set_ratio(2.5);
  ASSERT_TRUE(group.Report(straggler, nullptr).ok());
  ASSERT_TRUE(group.Finish(v1::JOB_STATE_SUCCEEDED).ok());
  watcher.join();

  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  EXPECT_THAT(watched.output, HasSubstr(id + " succeeded"));
  for (const v1::EpochMetrics& row : rows) EXPECT_THAT(watched.output, HasSubstr(WatchLine(row)));
  EXPECT_THAT(watched.output, HasSubstr("straggler: rank 1 at step 40"));

  // The report is the worker's timing.md and epochs.csv of exactly these rows.
  std::vector<EpochRow> expected;
  std::string csv = EpochCsvHeader() + "\n";
  for (const v1::EpochMetrics& row : rows) {
    expected.push_back(FromEpochMetrics(row));
    csv += EpochCsvLine(expected.back()) + "\n";
  }
  CommandResult report = RunCommand(Gantry(port, "report " + id), 30, false);
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_EQ(report.output.substr(0, TimingMarkdown(expected, 2).size()), TimingMarkdown(expected, 2));
  EXPECT_THAT(report.output, HasSubstr("| 16 | 2 | 40 | 1 |"));
  EXPECT_EQ(RunCommand(Gantry(port, "report --csv " + id), 30, false).output, csv);
  const nlohmann::json j = nlohmann::json::parse(RunCommand(Gantry(port, "--json report " + id), 30, false).output);
  ASSERT_EQ(j.at("epochs").size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(j["epochs"][i]["batch_size"].get<int64_t>(), rows[i].batch_size());
    EXPECT_EQ(j["epochs"][i]["seconds"].get<double>(), rows[i].seconds());
    EXPECT_EQ(j["epochs"][i]["steady_step_ms"].get<double>(), rows[i].steady_step_ms());
    EXPECT_EQ(j["epochs"][i]["g_loss"].get<double>(), rows[i].g_loss());
  }
  EXPECT_EQ(j["summary"].size(), 2u);

  const nlohmann::json status = nlohmann::json::parse(RunCommand(Gantry(port, "--json status " + id), 30, false).output);
  EXPECT_EQ(status["state"], "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(status["attempts"], 1);
  EXPECT_EQ(status["spec"]["batch_sizes"], nlohmann::json::array({8, 16}));
  EXPECT_THAT(RunCommand(Gantry(port, "jobs --state succeeded"), 30).output, HasSubstr(id));
  EXPECT_THAT(RunCommand(Gantry(port, "groups"), 30).output, HasSubstr(group.group_id()));

  coordinator.process().Signal(SIGTERM);
  EXPECT_EQ(coordinator.process().Wait(20), 0) << coordinator.process().Log();
}

// The learning-rate rule and the quality target travel from `gantry submit` to the
// worker's spec, and the report shows the time to the target per batch size (the text
// and the JSON summary alike).
TEST(CoordinatorEndToEnd, ARateRuleAndATargetReachTheWorkerAndTheReport) {
  const testing::Folders s = testing::MakeFolders("e2e_target");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const CommandResult submitted = RunCommand(
      Gantry(port, "--json submit --dataset mnist --data-dir " + s.data +
                       " --batch-size 8,16 --epochs 1 --world-size 2 --lr-scaling linear --base-batch-size 8"
                       " --warmup-steps 5 --warmup-start 0.3 --d-lr-ratio 4 --g-ema 0.999 --target-fd 20"
                       " --stop-at-target --augment cutout,color"),
      30, /*with_stderr=*/false);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string id = nlohmann::json::parse(submitted.output).at("id").get<std::string>();
  testing::FakeWorkerGroup group(coordinator.address(), 2);
  ASSERT_TRUE(group.Register().ok());
  ASSERT_TRUE(group.AcquireJob(20));
  const v1::RunSpec& spec = group.acquired().job().spec();
  EXPECT_EQ(spec.lr_scaling(), "linear");
  EXPECT_EQ(spec.base_batch_size().value(), 8);
  EXPECT_EQ(spec.warmup_steps().value(), 5);
  EXPECT_EQ(spec.target_fd().value(), 20);
  EXPECT_DOUBLE_EQ(spec.warmup_start().value(), 0.3);
  EXPECT_DOUBLE_EQ(spec.d_lr_ratio().value(), 4);
  EXPECT_DOUBLE_EQ(spec.g_ema().value(), 0.999);
  EXPECT_EQ(spec.augment(), "cutout,color");  // as given; the worker runs color, then cutout
  EXPECT_TRUE(spec.has_stop_at_target() && spec.stop_at_target().value());
  EXPECT_FALSE(spec.has_target_rel_l2());
  for (int64_t batch : {8, 16}) {  // FD 12.5: the first scored epoch meets the target
    ASSERT_TRUE(group.ReportEpoch(testing::ScoredEpochRow(batch, 1, 2), nullptr).ok());
  }
  ASSERT_TRUE(group.Finish(v1::JOB_STATE_SUCCEEDED).ok());
  const CommandResult report = RunCommand(Gantry(port, "report " + id), 30, false);
  EXPECT_THAT(report.output, HasSubstr("## Time to target (Fréchet distance <= 20"));
  EXPECT_THAT(report.output, HasSubstr("| 16 | epoch 1 (by) |"));
  const nlohmann::json j = nlohmann::json::parse(RunCommand(Gantry(port, "--json report " + id), 30, false).output);
  ASSERT_EQ(j.at("summary").size(), 2u);
  EXPECT_EQ(j["summary"][1]["target_reached"], true);
  EXPECT_GT(j["summary"][1]["samples_to_target"].get<double>(), 0);
  const CommandResult bad = RunCommand(
      Gantry(port, "submit --dataset mnist --data-dir " + s.data + " --lr-scaling cubic"), 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--lr-scaling"));
  // The coordinator refuses what the worker would: augmentation of a conditional model.
  const CommandResult p2p = RunCommand(
      Gantry(port, "submit --dataset mnist --data-dir " + s.data + " --model pix2pix --augment translation"), 30);
  EXPECT_EQ(p2p.exit_code, 2) << p2p.output;
  EXPECT_THAT(p2p.output, HasSubstr("--augment translation applies to the unconditional GAN step"));
}

TEST(CoordinatorEndToEnd, CancelMidRunStopsTheGroup) {
  const testing::Folders s = testing::MakeFolders("e2e_cancel");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string id = SubmitSweep(port, s);
  testing::FakeWorkerGroup group(coordinator.address(), 2);
  ASSERT_TRUE(group.Register().ok());
  ASSERT_TRUE(group.AcquireJob(20));
  v1::ReportProgressResponse reply;
  ASSERT_TRUE(group.ReportEpoch(testing::EpochRow(8, 1, 2), &reply).ok());
  EXPECT_FALSE(reply.cancel());

  const CommandResult cancelled = RunCommand(Gantry(port, "cancel " + id), 30);
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.output;
  EXPECT_THAT(cancelled.output, HasSubstr("cancelling"));
  v1::HeartbeatResponse beat;
  ASSERT_TRUE(group.Heartbeat(&beat).ok());
  EXPECT_TRUE(beat.cancel());
  ASSERT_TRUE(group.Report(v1::ReportProgressRequest(), &reply).ok());
  EXPECT_TRUE(reply.cancel());
  ASSERT_TRUE(group.Finish(v1::JOB_STATE_CANCELLED).ok());

  EXPECT_EQ(RunCommand(Gantry(port, "watch " + id), 30).exit_code, 8);
  const nlohmann::json status = nlohmann::json::parse(RunCommand(Gantry(port, "--json status " + id), 30, false).output);
  EXPECT_EQ(status["state"], "JOB_STATE_CANCELLED");
  EXPECT_EQ(RunCommand(Gantry(port, "cancel " + id), 30).exit_code, 6);
  EXPECT_EQ(RunCommand(Gantry(port, "--json report " + id), 30, false).exit_code, 0);
  EXPECT_EQ(RunCommand(Gantry(port, "status job-77"), 30).exit_code, 3);
}

TEST(CoordinatorEndToEnd, ARunFileSubmitsAsTheWorkerReadsIt) {
  const testing::Folders s = testing::MakeFolders("e2e_runfile");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  // A relative data-dir means the current folder's, as for gantry-worker train; flags
  // override the file.
  std::ofstream(s.dir + "/run.yaml") << "dataset: mnist\ndata-dir: data/mnist\nbatch_size: [64, 128]\n"
                                        "epochs: 5\nbeta1: 0\nsync-bn: true\n"
                                        "lr-scaling: sqrt\nwarmup_start: 0.25\ng-ema: 0.99\ntarget-fd: 30\n"
                                        "augment: translation\n"
                                        "stop-at-target: true\n";
  const CommandResult r = RunCommand(
      "sh -c 'cd " + s.dir + " && " + Gantry(coordinator.port(), "--json submit run.yaml --epochs 2 --world-size 2'"),
      30, false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json spec = nlohmann::json::parse(r.output).at("spec");
  EXPECT_EQ(spec["data_dir"], std::filesystem::path(s.data).lexically_normal().string());
  EXPECT_EQ(spec["batch_sizes"], nlohmann::json::array({64, 128}));
  EXPECT_EQ(spec["epochs"], 2);
  EXPECT_EQ(spec["beta1"], 0.0);  // a zero that was given, not the default 0.5
  EXPECT_EQ(spec["sync_bn"], true);
  EXPECT_EQ(spec["lr"], nullptr);  // not given: the worker's default
  // The learning-rate rule and the target from a run file, as from flags.
  EXPECT_EQ(spec["lr_scaling"], "sqrt");
  EXPECT_EQ(spec["warmup_start"], 0.25);
  EXPECT_EQ(spec["g_ema"], 0.99);
  EXPECT_EQ(spec["augment"], "translation");
  EXPECT_EQ(spec["target_fd"], 30.0);
  EXPECT_EQ(spec["stop_at_target"], true);
  EXPECT_EQ(spec["warmup_steps"], nullptr);
  std::ofstream(s.dir + "/bad.yaml") << "dataset: mnist\nwarp: 9\n";
  const CommandResult bad = RunCommand(Gantry(coordinator.port(), "submit " + s.dir + "/bad.yaml"), 30);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("unknown setting 'warp'"));
}

}  // namespace
}  // namespace gantry
