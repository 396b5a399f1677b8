// A rollout as a coordinator job, end to end on loopback: make-flow writes a small case
// into the coordinator's data root, `gantry submit --model pix2pix` trains a tiny model
// on `mpirun -np 2 gantry-worker serve`, and `gantry rollout` rolls the finished run out
// on the same pool, into RUN/rollout-<case>-<job id>/ (a second rollout into its own),
// with the very files (and numbers) the standalone `gantry-worker rollout` writes, which
// refuses an --out that holds files. Submissions the coordinator must refuse are refused
// with the fix.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

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

TEST(RolloutEndToEnd, ARolloutOfAFinishedRunRunsOnThePoolIntoItsRunFolder) {
  if (access(GANTRY_MPIEXEC, X_OK) != 0) GTEST_FAIL() << "no mpirun at " << GANTRY_MPIEXEC << " (bash scripts/install_deps.sh)";
  const std::string dir = testing::MakeTempDir("rollout_e2e");
  const std::string data = dir + "/data", case_dir = data + "/case-1";
  const CommandResult made =
      RunCommand(std::string(GANTRY_WORKER_BIN) + " make-flow --out " + case_dir +
                     " --nx 96 --ny 48 --re 100 --frames 30 --seed 1",
                 120);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  testing::CoordinatorProcess coordinator(dir, dir + "/gantry.db", data);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();

  const CommandResult submitted = RunCommand(
      Gantry(port, "--json submit --model pix2pix --dataset flow --data-dir " + data +
                       " --image-size 32 --ngf 8 --ndf 8 --batch-size 8 --epochs 1 --max-steps 3 --world-size 2"),
      30, false);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string train = nlohmann::json::parse(submitted.output).at("id").get<std::string>();
  // Not finished yet: the state forbids it (6), and the message says what to wait for.
  CommandResult early = RunCommand(Gantry(port, "rollout " + train + " --case " + case_dir + " --steps 6"), 30);
  EXPECT_EQ(early.exit_code, 6) << early.output;
  EXPECT_THAT(early.output, HasSubstr("gantry watch " + train));

  testing::PoolProcess pool(dir, coordinator.address(), {"--max-jobs", "3", "--report-seconds", "0.5"});
  const CommandResult trained = RunCommand(Gantry(port, "watch " + train + " --for 120"), 150, false);
  ASSERT_EQ(trained.exit_code, 0) << trained.output << pool.process().Log();

  // Bad rollouts of the finished run are refused at submission, naming the fix.
  CommandResult bad = RunCommand(Gantry(port, "rollout " + train + " --case " + case_dir + " --steps 6 --tile 64"), 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("rollout.tile: 64: the model of " + train + " takes tiles of its --image-size 32"));
  bad = RunCommand(Gantry(port, "rollout " + train + " --case " + dir + " --steps 6"), 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("rollout.case_dir"));

  const CommandResult rolled =
      RunCommand(Gantry(port, "--json rollout " + train + " --case " + case_dir + " --steps 6 --overlap 8"), 30, false);
  ASSERT_EQ(rolled.exit_code, 0) << rolled.output;
  const std::string rollout = nlohmann::json::parse(rolled.output).at("id").get<std::string>();
  const CommandResult watched = RunCommand(Gantry(port, "watch " + rollout + " --for 120"), 150, false);
  EXPECT_EQ(watched.exit_code, 0) << watched.output << pool.process().Log();
  // As the pool reports it: absolute, normalised.
  const std::string run = std::filesystem::path(pool.runs_dir() + "/" + train).lexically_normal().string();
  // Each rollout job writes a folder of its own (issue 29, item 8).
  const std::string out = run + "/rollout-case-1-" + rollout;
  EXPECT_THAT(watched.output, HasSubstr("rolls out " + train + " into "));
  EXPECT_THAT(watched.output, HasSubstr(out));
  EXPECT_THAT(watched.output, HasSubstr(rollout + " succeeded"));
  struct stat first {};
  ASSERT_EQ(::stat((out + "/rollout.csv").c_str(), &first), 0);
  // A second rollout of the same run over the same case leaves the first's files alone.
  const CommandResult again =
      RunCommand(Gantry(port, "--json rollout " + train + " --case " + case_dir + " --steps 3 --overlap 8"), 30, false);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const std::string second = nlohmann::json::parse(again.output).at("id").get<std::string>();
  const CommandResult watched_again = RunCommand(Gantry(port, "watch " + second + " --for 120"), 150, false);
  EXPECT_EQ(watched_again.exit_code, 0) << watched_again.output << pool.process().Log();
  EXPECT_THAT(watched_again.output, HasSubstr(run + "/rollout-case-1-" + second));
  const std::string second_csv = testing::ReadFile(run + "/rollout-case-1-" + second + "/rollout.csv");
  EXPECT_EQ(std::count(second_csv.begin(), second_csv.end(), '\n'), 4) << second_csv;
  struct stat after {};
  ASSERT_EQ(::stat((out + "/rollout.csv").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, first.st_ino) << "the first rollout's rollout.csv was replaced";
  EXPECT_EQ(after.st_mtim.tv_nsec, first.st_mtim.tv_nsec);
  EXPECT_EQ(pool.process().Wait(30), 0) << "--max-jobs 3 ends the pool cleanly\n" << pool.process().Log();

  const std::string csv = testing::ReadFile(out + "/rollout.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7) << csv;
  EXPECT_THAT(testing::ReadFile(out + "/rollout.md"), HasSubstr("tiles/s over 2 rank(s)"));
  for (const char* file : {"/strip.png", "/errors.png", "/rollout.json"}) {
    EXPECT_GT(std::filesystem::exists(out + file) ? std::filesystem::file_size(out + file) : 0, 0u) << out + file;
  }
  EXPECT_THAT(testing::ReadFile(out + "/log.txt"), HasSubstr("rollout of " + run));
  const CommandResult status = RunCommand(Gantry(port, "status " + rollout), 30, false);
  EXPECT_THAT(status.output, HasSubstr(out));

  // The standalone command on one rank, same run and options: the same numbers.
  const CommandResult standalone =
      RunCommand(std::string(GANTRY_WORKER_BIN) + " rollout --run " + run + " --case " + case_dir +
                     " --steps 6 --overlap 8 --out " + dir + "/standalone",
                 120);
  ASSERT_EQ(standalone.exit_code, 0) << standalone.output;
  EXPECT_EQ(testing::ReadFile(dir + "/standalone/rollout.csv"), csv);
  // Run again into the same --out: refused before anything runs, the files untouched.
  const CommandResult twice =
      RunCommand(std::string(GANTRY_WORKER_BIN) + " rollout --run " + run + " --case " + case_dir +
                     " --steps 3 --overlap 8 --out " + dir + "/standalone",
                 120);
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_THAT(twice.output, HasSubstr("--out " + dir + "/standalone exists and is not an empty folder"));
  EXPECT_EQ(testing::ReadFile(dir + "/standalone/rollout.csv"), csv);
}

}  // namespace
}  // namespace gantry
