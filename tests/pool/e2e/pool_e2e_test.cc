// End to end on loopback: a real gantry-coordinator, `mpirun -np 2 gantry-worker serve`
// and the gantry CLI, on small slices of Fashion-MNIST: a sweep watched to the end whose
// report matches the run folder, a cancel mid-run, a rank killed mid-run (before any
// checkpoint: the requeued job starts over; after one: it resumes bit-identically), a
// coordinator killed and restarted mid-run, SIGTERM, and a refused token.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/pool/e2e/pool_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

// The lease of the tests that kill a rank and wait for its job to be requeued: short,
// so the wait is, yet three heartbeat periods (lease/3 each), so a pool that trains next
// to the test on a loaded 2-core machine does not lose a job it is still running.
constexpr char kKillLeaseSeconds[] = "5";

class PoolEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = testing::MissingPrerequisite(); !missing.empty()) GTEST_FAIL() << missing;
    dir_ = testing::MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  // Submits a Fashion-MNIST job for 2 ranks (0: any group); returns its id.
  std::string Submit(int port, const std::string& flags, const std::string& cli_flags = "", int world_size = 2) {
    const CommandResult r = RunCommand(
        Gantry(port, cli_flags + " --json submit --dataset fashion-mnist --world-size " +
                         std::to_string(world_size) + " " + flags),
        30, /*with_stderr=*/false);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? nlohmann::json::parse(r.output).at("id").get<std::string>() : "";
  }

  // Waits until the job has done at least `steps` steps of its current epoch.
  bool WaitForSteps(int port, const std::string& id, int64_t steps, double timeout_seconds = 20) {
    return testing::WaitUntil(
        [&] {
          const nlohmann::json s = testing::JobStatus(port, id);
          return s.contains("progress") && s["progress"].is_object() && s["progress"]["step"].get<int64_t>() >= steps;
        },
        timeout_seconds);
  }

  std::string dir_;
};

TEST_F(PoolEndToEnd, ASweepRunsToTheEndAndTheReportMatchesTheRunFolder) {
  const std::string token = "0123456789abcdef0123456789abcdef";
  std::ofstream(dir_ + "/token") << token << "\n";
  // The sweep makes rank 1 slow on purpose (a debug switch), to see the rebalance.
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot,
                                          {"--token-file", dir_ + "/token", "--allow-debug-settings"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string cli = "--token " + dir_ + "/token";
  // Rank 1 is 200 ms slower per step: straggler events, reported and stored, and the
  // coordinator's plan for epoch 2 of batch 32 gives rank 1 a smaller share.
  const std::string id = Submit(port,
                                "--limit-images 128 --batch-size 32,64 --epochs 2 --straggler-window 3 "
                                "--debug-slow-rank 1 --debug-slow-ms 200 --rebalance",
                                cli);
  testing::PoolProcess pool(dir_, coordinator.address(),
                            {"--token", dir_ + "/token", "--max-jobs", "1", "--report-seconds", "0.5"});
  const CommandResult watched = RunCommand(Gantry(port, cli + " watch " + id + " --for 60"), 90, false);
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  EXPECT_THAT(watched.output, HasSubstr(id + " succeeded"));
  EXPECT_THAT(watched.output, HasSubstr("straggler: rank 1"));
  EXPECT_EQ(pool.process().Wait(30), 0) << "--max-jobs 1 ends the pool cleanly\n" << pool.process().Log();

  const std::string run = pool.runs_dir() + "/" + id;
  const std::string epochs_csv = testing::ReadFile(run + "/epochs.csv");
  EXPECT_EQ(std::count(epochs_csv.begin(), epochs_csv.end(), '\n'), 5) << epochs_csv;
  const CommandResult csv = RunCommand(Gantry(port, cli + " report --csv " + id), 30, false);
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.output, epochs_csv) << "the coordinator's rows are the run folder's, every column";
  const nlohmann::json report =
      nlohmann::json::parse(RunCommand(Gantry(port, cli + " --json report " + id), 30, false).output);
  const std::string stragglers_csv = testing::ReadFile(run + "/stragglers.csv");
  EXPECT_GE(report["stragglers"].size(), 1u);
  EXPECT_EQ(report["stragglers"].size() + 1, static_cast<size_t>(std::count(stragglers_csv.begin(),
                                                                            stragglers_csv.end(), '\n')))
      << stragglers_csv;
  EXPECT_EQ(report["job"]["attempts"], 1);
  for (const char* file : {"/timing.md", "/run.json", "/log.txt", "/samples/b0064/epoch_001.png"}) {
    EXPECT_TRUE(std::filesystem::exists(run + file)) << run + file;
  }
  const std::string log = testing::ReadFile(run + "/log.txt");
  EXPECT_THAT(log, HasSubstr(id + " (attempt 1 of 3)"));
  EXPECT_THAT(log, ::testing::ContainsRegex("global batch 32 epoch 2: shares 16/16 -> [0-9]+/([1-9]|1[0-5]) \\(planned\\)"));
  const nlohmann::json groups = nlohmann::json::parse(RunCommand(Gantry(port, cli + " --json groups"), 30, false).output);
  ASSERT_EQ(groups["groups"].size(), 1u);
  EXPECT_EQ(groups["groups"][0]["world_size"], 2);
  EXPECT_EQ(groups["groups"][0]["hosts"].size(), 2u);
}

TEST_F(PoolEndToEnd, CancelledAndFailedJobsLeaveThePoolServing) {
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string long_job = Submit(port, "--limit-images 8192 --batch-size 32 --epochs 1");
  // Valid at the coordinator, which cannot know the image count; refused on every rank.
  const std::string bad_job = Submit(port, "--limit-images 16 --batch-size 32 --epochs 1");
  // For any group size, so valid at the coordinator; on 2 ranks a batch of 3 would leave
  // one rank a single row, too few for BatchNorm (issue 18: each attempt used to abort the
  // pool). The scheduler keeps it back for a group whose ranks each get 2 rows.
  const std::string thin_job = Submit(port, "--limit-images 128 --batch-size 3 --epochs 1", "", 0);
  const std::string short_job = Submit(port, "--limit-images 128 --batch-size 32 --epochs 1");
  testing::PoolProcess pool(dir_, coordinator.address(), {"--max-jobs", "3", "--report-seconds", "0.5"});
  ASSERT_TRUE(WaitForSteps(port, long_job, 2)) << pool.process().Log();
  EXPECT_EQ(RunCommand(Gantry(port, "cancel " + long_job), 30).exit_code, 0);
  const CommandResult watched = RunCommand(Gantry(port, "watch " + long_job + " --for 20"), 30, false);
  EXPECT_EQ(watched.exit_code, 8) << "cancelled\n" << watched.output;
  EXPECT_THAT(watched.output, HasSubstr("cancelled on group-1"));
  const CommandResult failed = RunCommand(Gantry(port, "watch " + bad_job + " --for 30"), 40, false);
  EXPECT_EQ(failed.exit_code, 7) << failed.output;
  EXPECT_THAT(failed.output, HasSubstr("--batch-size 32 exceeds the 16 training images"));
  EXPECT_EQ(RunCommand(Gantry(port, "watch " + short_job + " --for 30"), 40, false).exit_code, 0);
  EXPECT_EQ(pool.process().Wait(30), 0) << pool.process().Log();
  const nlohmann::json thin = testing::JobStatus(port, thin_job);
  EXPECT_EQ(thin["state"], "JOB_STATE_QUEUED") << thin.dump();
  EXPECT_EQ(thin["attempts"], 0) << "never handed to the 2-rank group";
  const std::string log = pool.process().Log();
  EXPECT_THAT(log, HasSubstr(long_job + " cancelled (stopped before batch 32 epoch 1 step"));
  EXPECT_EQ(testing::JobStatus(port, long_job)["epochs_reported"], 0);
  EXPECT_TRUE(std::filesystem::exists(pool.runs_dir() + "/" + short_job + "/timing.md"));
}

TEST_F(PoolEndToEnd, AKilledRankEndsTheGroupAndARestartedPoolRunsTheRequeuedJob) {
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot,
                                          {"--lease-seconds", kKillLeaseSeconds});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string id = Submit(port, "--limit-images 512 --batch-size 32 --epochs 1");
  {
    testing::PoolProcess first(dir_, coordinator.address(), {"--report-seconds", "0.5"}, "first.log");
    ASSERT_TRUE(WaitForSteps(port, id, 2)) << first.process().Log();
    const int rank1 = first.RankPid(1);
    ASSERT_GT(rank1, 0);
    kill(rank1, SIGKILL);
    EXPECT_NE(first.process().Wait(30), 0) << "the group ends when a rank dies";
  }
  ASSERT_TRUE(testing::WaitUntil([&] { return testing::JobStatus(port, id)["state"] == "JOB_STATE_QUEUED"; }, 40))
      << "requeued once the lease ran out";
  testing::PoolProcess second(dir_, coordinator.address(), {"--max-jobs", "1"}, "second.log");
  const CommandResult watched = RunCommand(Gantry(port, "watch " + id + " --for 40"), 50, false);
  EXPECT_EQ(watched.exit_code, 0) << watched.output << second.process().Log();
  EXPECT_THAT(watched.output, HasSubstr("requeued after attempt 1 of 3"));
  EXPECT_EQ(second.process().Wait(30), 0);
  const nlohmann::json status = testing::JobStatus(port, id);
  EXPECT_EQ(status["attempts"], 2);
  EXPECT_EQ(status["epochs_reported"], 1);
  const std::string run = second.runs_dir() + "/" + id + ".attempt-2";
  EXPECT_EQ(RunCommand(Gantry(port, "report --csv " + id), 30, false).output, testing::ReadFile(run + "/epochs.csv"));
}

TEST_F(PoolEndToEnd, ARequeuedJobResumesFromItsCheckpointAndEndsAsIfNeverInterrupted) {
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot,
                                          {"--lease-seconds", kKillLeaseSeconds, "--allow-debug-settings"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  // 16 steps an epoch, a checkpoint every 4 steps. The first attempt's rank 0 kills itself
  // (SIGKILL) after step 26 of the run, in epoch 2 after the checkpoint of step 24
  // (--debug-crash-after-step: the point is chosen, not raced; a resumed attempt does not
  // crash). The reference job is the same spec without the crash. A linearly scaled rate
  // warming up over 30 steps spans the checkpoint: the pool passes the rule to the ranks
  // and the resumed attempt continues its ramp.
  const std::string spec = "--limit-images 512 --batch-size 32 --epochs 2 --checkpoint-every-steps 4"
                           " --lr-scaling linear --base-batch-size 16 --warmup-steps 30";
  const std::string id = Submit(port, spec + " --debug-crash-after-step 26");
  std::string first_runs;
  {
    testing::PoolProcess first(dir_, coordinator.address(), {"--report-seconds", "0.3"}, "first.log");
    first_runs = first.runs_dir();
    EXPECT_NE(first.process().Wait(120), 0) << "the group ends when its rank 0 dies\n" << first.process().Log();
  }
  const nlohmann::json lost = testing::JobStatus(port, id);
  const std::string run = std::filesystem::absolute(first_runs + "/" + id).lexically_normal().string();
  EXPECT_EQ(lost["checkpoint"]["run_folder"], run);
  EXPECT_EQ(lost["checkpoint"]["batch_size"], 32);
  EXPECT_EQ(lost["checkpoint"]["epoch"], 2);
  ASSERT_TRUE(testing::WaitUntil([&] { return testing::JobStatus(port, id)["state"] == "JOB_STATE_QUEUED"; }, 40))
      << "requeued once the lease ran out";
  // The same spec, never interrupted, for the comparison.
  const std::string reference = Submit(port, spec);
  testing::PoolProcess second(dir_, coordinator.address(), {"--max-jobs", "2"}, "second.log");
  const CommandResult watched = RunCommand(Gantry(port, "watch " + id + " --for 60"), 70, false);
  EXPECT_EQ(watched.exit_code, 0) << watched.output << second.process().Log();
  EXPECT_EQ(RunCommand(Gantry(port, "watch " + reference + " --for 60"), 70, false).exit_code, 0);
  EXPECT_EQ(second.process().Wait(30), 0) << second.process().Log();

  const nlohmann::json status = testing::JobStatus(port, id);
  EXPECT_EQ(status["attempts"], 2);
  EXPECT_EQ(status["epochs_reported"], 2);
  EXPECT_EQ(status["checkpoint"]["run_folder"], run) << "the second attempt continued the first one's folder";
  EXPECT_FALSE(std::filesystem::exists(second.runs_dir() + "/" + id + ".attempt-2"));
  const std::string log = testing::ReadFile(run + "/log.txt");
  EXPECT_THAT(log, HasSubstr("--debug-crash-after-step 26: killing this process now"));
  EXPECT_THAT(log, HasSubstr(id + " (attempt 2 of 3)"));
  EXPECT_THAT(log, HasSubstr("resuming from its newest checkpoint"));
  EXPECT_THAT(log, HasSubstr("resuming at batch 32 epoch 2 step 8/16"));
  EXPECT_THAT(log, HasSubstr("learning rate at global batch 32: 0.0002 (linear scaling of 0.0001 from batch 16), "
                             "warm-up over 30 steps from 10 %"));
  const nlohmann::json manifest = nlohmann::json::parse(testing::ReadFile(run + "/run.json"));
  EXPECT_EQ(manifest["config"]["learning_rate"]["scaling"], "linear");
  EXPECT_EQ(manifest["config"]["learning_rate"]["warmup_steps"], 30);
  const std::string epochs_csv = testing::ReadFile(run + "/epochs.csv");
  EXPECT_EQ(std::count(epochs_csv.begin(), epochs_csv.end(), '\n'), 3) << "a header and each epoch once\n"
                                                                        << epochs_csv;
  EXPECT_EQ(RunCommand(Gantry(port, "report --csv " + id), 30, false).output, epochs_csv);
  // Bit-identical to the run that was never interrupted: the same losses, to the last bit.
  const nlohmann::json resumed = nlohmann::json::parse(RunCommand(Gantry(port, "--json report " + id), 30, false).output);
  const nlohmann::json clean =
      nlohmann::json::parse(RunCommand(Gantry(port, "--json report " + reference), 30, false).output);
  ASSERT_EQ(resumed["epochs"].size(), 2u);
  ASSERT_EQ(clean["epochs"].size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(resumed["epochs"][e]["d_loss"].get<double>(), clean["epochs"][e]["d_loss"].get<double>()) << e;
    EXPECT_EQ(resumed["epochs"][e]["g_loss"].get<double>(), clean["epochs"][e]["g_loss"].get<double>()) << e;
  }
}

TEST_F(PoolEndToEnd, ACoordinatorRestartMidRunLosesNothing) {
  const std::string db = dir_ + "/gantry.db";
  auto first = std::make_unique<testing::CoordinatorProcess>(dir_, db, testing::kDataRoot);
  ASSERT_TRUE(first->started());
  const int port = first->port();
  const std::string id = Submit(port, "--limit-images 512 --batch-size 32,64 --epochs 1");
  testing::PoolProcess pool(dir_, first->address(),
                            {"--max-jobs", "1", "--report-seconds", "0.5", "--max-backoff", "0.5"});
  ASSERT_TRUE(testing::WaitUntil([&] { return testing::JobStatus(port, id)["epochs_reported"] == 1; }, 30))
      << pool.process().Log();
  first->process().Signal(SIGKILL);
  first->process().Wait(10);
  first.reset();
  // The pool trains on without it: wait until it has seen the coordinator gone.
  ASSERT_TRUE(testing::WaitUntil(
      [&] { return pool.process().Log().find("cannot report to the coordinator") != std::string::npos; }, 30))
      << pool.process().Log();
  testing::CoordinatorProcess second(dir_, db, testing::kDataRoot, {}, port);
  ASSERT_TRUE(second.started());
  const CommandResult watched = RunCommand(Gantry(port, "watch " + id + " --for 40"), 50, false);
  EXPECT_EQ(watched.exit_code, 0) << watched.output << pool.process().Log();
  EXPECT_EQ(pool.process().Wait(30), 0) << pool.process().Log();
  EXPECT_THAT(pool.process().Log(), HasSubstr("cannot report to the coordinator"));
  const nlohmann::json status = testing::JobStatus(port, id);
  EXPECT_EQ(status["attempts"], 1) << "the job never left the group";
  EXPECT_EQ(status["epochs_reported"], 2);
  EXPECT_EQ(RunCommand(Gantry(port, "report --csv " + id), 30, false).output,
            testing::ReadFile(pool.runs_dir() + "/" + id + "/epochs.csv"));
}

TEST_F(PoolEndToEnd, SigtermStopsEveryRankCleanlyAndTheJobIsRequeued) {
  // A lease far longer than the test: QUEUED can only come from the release.
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot, {"--lease-seconds", "600"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string id = Submit(port, "--limit-images 4096 --batch-size 32 --epochs 1");
  testing::PoolProcess pool(dir_, coordinator.address(), {"--report-seconds", "0.5"});
  ASSERT_TRUE(WaitForSteps(port, id, 2)) << pool.process().Log();
  pool.process().Signal(SIGTERM);  // mpirun passes it on to every rank
  EXPECT_NE(pool.process().Wait(20), 0);
  const std::string log = pool.process().Log();
  EXPECT_THAT(log, HasSubstr("gantry-worker serve: stopped by SIGTERM"));
  EXPECT_THAT(log, HasSubstr(id + " abandoned: stopped before batch 32 epoch 1 step"));
  EXPECT_THAT(log, HasSubstr("released to the coordinator, which requeues it"));
  // Released, not lost: QUEUED at once, long before the group's lease could run out.
  EXPECT_EQ(testing::JobStatus(port, id)["state"], "JOB_STATE_QUEUED");
  // No step is lost: the stop wrote a checkpoint of every step done, and reported it.
  const std::string run_log = testing::ReadFile(pool.runs_dir() + "/" + id + "/log.txt");
  EXPECT_THAT(run_log, HasSubstr("stopping: writing a checkpoint at step"));
  const nlohmann::json status = testing::JobStatus(port, id);
  ASSERT_TRUE(status["checkpoint"].is_object()) << status.dump();
  EXPECT_GE(status["checkpoint"].value("run_step", int64_t{0}), 2);
  EXPECT_EQ(status["checkpoint"].value("step_in_epoch", int64_t{0}), status["checkpoint"].value("run_step", int64_t{0}));
}

TEST_F(PoolEndToEnd, AOneProcessPoolRunsAJobOverTlsWithAToken) {
  if (!std::filesystem::exists("/usr/bin/openssl")) GTEST_FAIL() << "no /usr/bin/openssl (bash scripts/install_deps.sh installs it)";
  const CommandResult made = RunCommand(
      absl::StrCat("/usr/bin/openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 ",
                   "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout ", dir_,
                   "/key.pem -out ", dir_, "/cert.pem"),
      30);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  std::ofstream(dir_ + "/token") << "0123456789abcdef0123456789abcdef\n";
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot,
                                          {"--token-file", dir_ + "/token", "--tls-cert", dir_ + "/cert.pem",
                                           "--tls-key", dir_ + "/key.pem"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string cli = "--tls-ca " + dir_ + "/cert.pem --token " + dir_ + "/token";
  const CommandResult submitted = RunCommand(
      Gantry(port, cli + " --json submit --dataset fashion-mnist --world-size 1 --limit-images 64 --batch-size 32"),
      30, false);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string id = nlohmann::json::parse(submitted.output).at("id").get<std::string>();
  // No mpirun: a group of one process.
  testing::ChildProcess pool({GANTRY_WORKER_BIN, "serve", "--coordinator", coordinator.address(), "--tls-ca",
                              dir_ + "/cert.pem", "--token", dir_ + "/token", "--max-jobs", "1", "--runs-dir",
                              dir_ + "/runs"},
                             dir_ + "/pool.log");
  EXPECT_EQ(pool.Wait(60), 0) << pool.Log();
  EXPECT_EQ(testing::JobStatus(port, id + " " + cli)["state"], "JOB_STATE_SUCCEEDED");
  EXPECT_THAT(testing::ReadFile(dir_ + "/runs/" + id + "/epochs.csv"), HasSubstr("\n32,1,"));
}

TEST_F(PoolEndToEnd, APoolWithoutTheTokenIsRefused) {
  std::ofstream(dir_ + "/token") << "0123456789abcdef0123456789abcdef\n";
  testing::CoordinatorProcess coordinator(dir_, dir_ + "/gantry.db", testing::kDataRoot,
                                          {"--token-file", dir_ + "/token"});
  ASSERT_TRUE(coordinator.started());
  const CommandResult r = RunCommand(absl::StrCat("env -u GANTRY_TOKEN ", GANTRY_WORKER_BIN, " serve --coordinator ",
                                                  coordinator.address(), " --runs-dir ", dir_, "/runs"),
                                     30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("refused the group"));
}

}  // namespace
}  // namespace gantry
