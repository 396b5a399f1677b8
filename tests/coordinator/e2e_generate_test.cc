// `gantry generate JOB_ID ...` end to end on loopback: the gantry CLI against the
// gantry-coordinator binary, with a fake worker group (a gRPC client playing rank 0)
// finishing the source run and then the generate job. What the CLI's flags become is
// what the coordinator stores and hands to the group; refusals exit with the contract's
// codes and name the field. (A real pool running a generate job end to end:
// python/tests/test_cluster.py; the worker's generate itself: tests/generate.)
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

nlohmann::json JsonOf(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json();
}

// Submits the 2-rank training run a generate samples; returns its id.
std::string SubmitTrainingRun(int port, const testing::Folders& s) {
  return JsonOf(RunCommand(Gantry(port, "--json submit --dataset mnist --data-dir " + s.data +
                                            " --batch-size 8 --epochs 1 --world-size 2"),
                           30, false))["id"]
      .get<std::string>();
}

// Runs the job the group acquires to SUCCEEDED, reporting `run_folder` as its checkpoint.
void FinishWithACheckpoint(testing::FakeWorkerGroup& group, const std::string& run_folder) {
  ASSERT_TRUE(group.AcquireJob(20));
  v1::ReportProgressRequest done;
  done.mutable_checkpoint()->set_host("worker-host");
  done.mutable_checkpoint()->set_run_folder(run_folder);
  done.mutable_checkpoint()->set_run_step(4);
  done.set_final_state(v1::JOB_STATE_SUCCEEDED);
  ASSERT_TRUE(group.Report(done, nullptr).ok());
}

TEST(GenerateEndToEnd, TheCliQueuesAGenerateOfAFinishedRunAndTheGroupGetsItsFlags) {
  const testing::Folders s = testing::MakeFolders("e2e_generate");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string train = SubmitTrainingRun(port, s);

  // Not finished yet: the state forbids it (6), naming the state.
  CommandResult early = RunCommand(Gantry(port, "generate " + train + " --count 16"), 30);
  EXPECT_EQ(early.exit_code, 6) << early.output;
  EXPECT_THAT(early.output, HasSubstr(train + " is queued; only a run that succeeded can be sampled"));
  CommandResult missing = RunCommand(Gantry(port, "generate job-99 --count 16"), 30);
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("no job 'job-99' to sample"));

  testing::FakeWorkerGroup group(coordinator.address(), 2);
  ASSERT_TRUE(group.Register().ok());
  FinishWithACheckpoint(group, "/runs/" + train);

  // Every flag reaches the stored job as its GenerateSpec field.
  const nlohmann::json queued = JsonOf(RunCommand(
      Gantry(port, "--json generate " + train + " --count 24 --seed 7 --checkpoint 4 --batch 8 --precision bf16 "
                   "--name best.v2 --label 'my samples' --world-size 2 --max-attempts 3"),
      30, false));
  const std::string id = queued["id"].get<std::string>();
  EXPECT_EQ(queued["state"], "JOB_STATE_QUEUED");
  const nlohmann::json status = JsonOf(RunCommand(Gantry(port, "--json status " + id), 30, false));
  const nlohmann::json& g = status["generate"];
  EXPECT_EQ(g["source_job_id"], train);
  EXPECT_EQ(g["count"], 24);
  EXPECT_EQ(g["seed"], 7);
  EXPECT_EQ(g["checkpoint"], 4);
  EXPECT_EQ(g["batch"], 8);
  EXPECT_EQ(g["precision"], "bf16");
  EXPECT_EQ(g["name"], "best.v2");
  EXPECT_TRUE(g["steps"].is_null()) << "an unset flag stays unset: the worker's default applies";
  EXPECT_TRUE(g["frame"].is_null());
  EXPECT_EQ(status["name"], "my samples");
  EXPECT_EQ(status["world_size"], 2);
  EXPECT_EQ(status["max_attempts"], 3);
  EXPECT_EQ(status["checkpoint"]["run_folder"], "/runs/" + train) << "the source's run folder is --run";
  EXPECT_THAT(RunCommand(Gantry(port, "jobs --state queued"), 30).output, HasSubstr("my samples"));

  // --watch follows it to the end while the group runs it: the group gets the spec as
  // stored and no shard plan; watch's exit code is the job's.
  CommandResult watched;
  std::thread watcher([&] {
    watched = RunCommand(Gantry(port, "generate " + train + " --count 4 --watch"), 60, false);
  });
  FinishWithACheckpoint(group, "/runs/" + train);
  EXPECT_EQ(group.acquired().job().id(), id);
  EXPECT_EQ(group.acquired().job().generate().count().value(), 24);
  EXPECT_EQ(group.acquired().job().generate().precision(), "bf16");
  EXPECT_EQ(group.acquired().plan().shares_size(), 0);
  FinishWithACheckpoint(group, "/runs/" + train);
  watcher.join();
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  EXPECT_THAT(watched.output, HasSubstr("submitted "));
  EXPECT_THAT(watched.output, HasSubstr(" succeeded"));
  const std::string watched_id = group.acquired().job().id();
  EXPECT_EQ(JsonOf(RunCommand(Gantry(port, "--json status " + watched_id), 30, false))["generate"]["name"], watched_id)
      << "without --name, the job's own id names its folder";
  EXPECT_EQ(JsonOf(RunCommand(Gantry(port, "--json status " + id), 30, false))["state"], "JOB_STATE_SUCCEEDED");
}

TEST(GenerateEndToEnd, BadFlagsExitTwoNamingTheFieldAndQueueNothing) {
  const testing::Folders s = testing::MakeFolders("e2e_generate_refusals");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string train = SubmitTrainingRun(port, s);
  testing::FakeWorkerGroup group(coordinator.address(), 2);
  ASSERT_TRUE(group.Register().ok());
  FinishWithACheckpoint(group, "/runs/" + train);

  const std::vector<std::pair<std::string, std::string>> cases = {
      // The CLI checks --count itself (as typed, before connecting); the coordinator's own
      // check of the field (generate.count) is in generate_job_test.cc.
      {"--count 0", "--count: bad value '0' (an integer in [1, 100000])"},
      {"--count 100001", "--count: bad value '100001' (an integer in [1, 100000])"},
      {"", "generate.count: say how many samples"},
      {"--count 4 --precision fp16", "generate.precision: 'fp16' is not fp32 or bf16"},
      {"--count 4 --name ../x", "generate.name: '../x': use letters"},
      {"--interpolate 1,2", "generate.steps: a walk needs 2 to"},
      {"--count 4 --case " + s.data, "holds no flow.json: give a case folder written by `gantry-worker make-flow"},
  };
  for (const auto& [flags, message] : cases) {
    const CommandResult refused = RunCommand(Gantry(port, "generate " + train + " " + flags), 30);
    EXPECT_EQ(refused.exit_code, 2) << flags << ": " << refused.output;
    EXPECT_THAT(refused.output, HasSubstr(message)) << flags;
  }
  const nlohmann::json jobs = JsonOf(RunCommand(Gantry(port, "--json jobs"), 30, false));
  EXPECT_EQ(jobs["jobs"].size(), 1u) << "only the training run: no refused generate was queued";
}

}  // namespace
}  // namespace gantry
