// What a requeued job's attempt continues (ResumableRunFolder) and what rank 0's pool
// observer tells the coordinator about the run folder and its checkpoints.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/pool/fake_coordinator_api.h"
#include "worker/pool/job_control.h"
#include "worker/pool/job_runner.h"
#include "worker/pool/pool_observer.h"
#include "worker/pool/report_buffer.h"
#include "worker/pool/report_sender.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string TempRunsDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/job_resume_", name, "_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteCheckpointFile(const std::string& run_folder, int64_t step) {
  std::filesystem::create_directories(run_folder + "/checkpoints");
  std::ofstream(absl::StrCat(run_folder, "/checkpoints/ckpt-", step, ".bin")) << "bytes";
}

v1::Job JobAt(int attempt, const std::string& reported_folder = "") {
  v1::Job job;
  job.set_id("job-7");
  job.set_attempts(attempt);
  if (!reported_folder.empty()) {
    job.mutable_checkpoint()->set_host("node-a");
    job.mutable_checkpoint()->set_run_folder(reported_folder);
  }
  return job;
}

TEST(ResumableRunFolder, TheFirstAttemptNeverResumes) {
  const std::string runs = TempRunsDir("first");
  WriteCheckpointFile(runs + "/job-7", 4);
  EXPECT_EQ(ResumableRunFolder(runs, JobAt(1), nullptr), "");
}

TEST(ResumableRunFolder, TheReportedFolderComesFirstThenTheJobsFolderHere) {
  const std::string runs = TempRunsDir("order");
  const std::string shared = runs + "/shared/job-7";
  WriteCheckpointFile(shared, 8);
  WriteCheckpointFile(runs + "/job-7", 4);
  EXPECT_EQ(ResumableRunFolder(runs, JobAt(2, shared), nullptr), shared);
  EXPECT_EQ(ResumableRunFolder(runs, JobAt(2, runs + "/elsewhere/job-7"), nullptr), runs + "/job-7");
}

TEST(ResumableRunFolder, AFolderWithoutCheckpointsStartsOverAndSaysWhy) {
  const std::string runs = TempRunsDir("none");
  std::filesystem::create_directories(runs + "/job-7/checkpoints");  // a run stopped before its first
  std::ofstream(runs + "/job-7/checkpoints/ckpt-4.bin.tmp.123") << "torn";
  std::string why;
  EXPECT_EQ(ResumableRunFolder(runs, JobAt(2), &why), "");
  EXPECT_THAT(why, HasSubstr("no checkpoint of an earlier attempt in " + runs + "/job-7"));
  EXPECT_EQ(ResumableRunFolder(runs, JobAt(3, "/gone/job-7"), &why), "");
  EXPECT_THAT(why, HasSubstr("attempt 2's run folder node-a:/gone/job-7 holds no checkpoint this host can read"));
  EXPECT_THAT(why, HasSubstr("--runs-dir on storage every group shares"));
}

// Every report fails (from before the sender starts), so what the observer buffered
// stays there to be looked at.
struct FailingApi {
  FailingApi() { api.FailReports(std::vector<absl::Status>(100, absl::UnavailableError("unreachable (test)"))); }
  testing::FakeCoordinatorApi api;
};

struct ObserverRig : FailingApi {
  explicit ObserverRig(v1::CheckpointRef prior)
      : sender(api, "group-1", buffer, control, ReportSenderOptions{.interval_seconds = 3600, .backoff = {}}),
        observer(buffer, sender, control, 0, "node-a", std::move(prior)) {}
  JobControl control{"job-7", 2};
  ReportBuffer buffer;
  ReportSender sender;
  PoolObserver observer;
};

TEST(PoolObserver, ReportsTheRunFolderThenEachCheckpoint) {
  ObserverRig rig({});
  rig.observer.OnRunFolder("/runs/./job-7");
  v1::CheckpointRef ref = rig.buffer.Take().request.checkpoint();
  EXPECT_EQ(ref.host(), "node-a");
  EXPECT_EQ(ref.run_folder(), "/runs/job-7");
  EXPECT_EQ(ref.run_step(), 0);
  rig.observer.OnCheckpoint({.run_step = 20, .batch_size = 32,
                             .epoch = 2, .step_in_epoch = 4});
  ref = rig.buffer.Take().request.checkpoint();
  EXPECT_EQ(ref.run_folder(), "/runs/job-7");
  EXPECT_EQ(ref.run_step(), 20);
  EXPECT_EQ(ref.batch_size(), 32);
  EXPECT_EQ(ref.epoch(), 2);
  EXPECT_EQ(ref.step_in_epoch(), 4);
  EXPECT_GT(ref.unix_ms(), 0);
}

TEST(PoolObserver, AResumedAttemptKeepsTheEarlierCheckpointAndResendsItsRows) {
  v1::CheckpointRef prior;
  prior.set_host("node-a");
  prior.set_run_folder("/runs/job-7");
  prior.set_run_step(20);
  prior.set_unix_ms(99);
  ObserverRig rig(prior);
  rig.observer.OnRunFolder("/runs/job-7");
  EXPECT_EQ(rig.buffer.Take().request.checkpoint().run_step(), 20) << "not reset to 0 by the new attempt";
  EpochRow row;
  row.batch_size = 32;
  row.epoch = 1;
  rig.observer.OnResumed({.run_step = 20, .batch_size = 32, .epoch = 2, .step_in_epoch = 4}, {row});
  const ReportBatch batch = rig.buffer.Take();
  ASSERT_EQ(batch.request.epochs_size(), 1) << "a row the coordinator may never have received";
  EXPECT_EQ(batch.request.epochs(0).epoch(), 1);
  EXPECT_EQ(batch.request.checkpoint().run_step(), 20);
  EXPECT_EQ(batch.request.checkpoint().unix_ms(), 99);
  EXPECT_EQ(batch.request.checkpoint().step_in_epoch(), 4);
}

}  // namespace
}  // namespace gantry
