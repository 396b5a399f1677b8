// End to end on loopback, when things go wrong: a group that stops heartbeating, a
// coordinator killed mid-run, a caller without the token, bad submissions, and start-up
// problems of gantry-coordinator itself.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "coordinator/app/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

std::string Submit(int port, const testing::Folders& s, const std::string& extra = "") {
  const CommandResult r = RunCommand(
      Gantry(port, "--json submit --dataset mnist --batch-size 8 --epochs 2 --world-size 2 --data-dir " + s.data + extra),
      30, false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output).at("id").get<std::string>() : "";
}

nlohmann::json Status(int port, const std::string& id) {
  return nlohmann::json::parse(RunCommand(Gantry(port, "--json status " + id), 30, false).output);
}

// The coordinator runs in this process with a fake monotonic clock, so the leases run out
// when the test moves the clock, not when a loaded machine happens to delay a poll: the
// silent group's lease ends, the healthy one's cannot, whatever the scheduling. The calls
// still cross gRPC on loopback, and the history is read with the real gantry CLI.
TEST(CoordinatorFailures, ASilentGroupLosesItsJobToAnother) {
  const testing::Folders s = testing::MakeFolders("e2e_lease");
  constexpr double kLeaseSeconds = 10;
  FakeClock monotonic(1'000'000'000);
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = s.dir + "/gantry.db";
  options.data_roots = {s.root};
  options.lease_seconds = kLeaseSeconds;
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options, monotonic, Clock::Real());
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  const std::string address = absl::StrCat("127.0.0.1:", port);
  const std::string id = Submit(port, s);
  testing::FakeWorkerGroup silent(address, 2), healthy(address, 2);
  ASSERT_TRUE(silent.Register().ok());
  ASSERT_TRUE(silent.AcquireJob(20));
  ASSERT_TRUE(healthy.Register().ok());
  // Half a lease on, the healthy group heartbeats; another half (and a second) on, the
  // silent group has been quiet for longer than its lease, the healthy one has not.
  monotonic.AdvanceMillis(kLeaseSeconds * 500);
  ASSERT_TRUE(healthy.Heartbeat().ok());
  monotonic.AdvanceMillis(kLeaseSeconds * 500 + 1000);
  (*server)->coordinator().ExpireLeases();  // the sweeper may have done it already: idempotent
  ASSERT_TRUE(healthy.AcquireJob(30));
  EXPECT_EQ(healthy.acquired().job().id(), id);
  EXPECT_EQ(healthy.acquired().job().attempts(), 2);
  EXPECT_EQ(silent.ReportEpoch(testing::EpochRow(8, 1, 2), nullptr).error_code(), grpc::StatusCode::ABORTED);
  const nlohmann::json status = Status(port, id);
  EXPECT_EQ(status["state"], "JOB_STATE_RUNNING");
  EXPECT_EQ(status["group_id"], healthy.group_id());
  const CommandResult history = RunCommand(Gantry(port, "watch " + id + " --for 0.3"), 30, false);
  EXPECT_THAT(history.output, HasSubstr("sent no heartbeat"));
  EXPECT_THAT(history.output, HasSubstr("requeued after attempt 1 of 3"));
  (*server)->Shutdown();
}

TEST(CoordinatorFailures, AKilledCoordinatorRestartsWithJobsAndHistory) {
  const testing::Folders s = testing::MakeFolders("e2e_restart");
  const std::string db = s.dir + "/gantry.db";
  auto first = std::make_unique<testing::CoordinatorProcess>(s.dir, db, s.root);
  ASSERT_TRUE(first->started());
  const int port = first->port();
  const std::string id = Submit(port, s);
  testing::FakeWorkerGroup group(first->address(), 2);
  ASSERT_TRUE(group.Register().ok());
  ASSERT_TRUE(group.AcquireJob(20));
  ASSERT_TRUE(group.ReportEpoch(testing::EpochRow(8, 1, 2), nullptr).ok());
  // A watcher that has seen the first epoch row when the coordinator dies.
  testing::ChildProcess watcher({"/bin/sh", "-c", Gantry(port, "watch " + id + " --for 60 --reconnect 30")},
                                s.dir + "/watch.log");
  for (int i = 0; i < 500 && !absl::StrContains(watcher.Log(), "     8     2     1 "); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_THAT(watcher.Log(), HasSubstr("     8     2     1 "));
  first->process().Signal(SIGKILL);
  first->process().Wait(10);
  testing::CoordinatorProcess second(s.dir, db, s.root, {}, port);
  ASSERT_TRUE(second.started()) << "could not listen on the same port again";
  group.Reconnect(second.address());
  ASSERT_TRUE(group.Heartbeat().ok());  // the group is still known, and still holds the job
  ASSERT_TRUE(group.ReportEpoch(testing::EpochRow(8, 2, 2), nullptr).ok());
  ASSERT_TRUE(group.Finish(v1::JOB_STATE_SUCCEEDED).ok());
  EXPECT_EQ(watcher.Wait(60), 0) << watcher.Log();
  const std::string watched = watcher.Log();
  EXPECT_THAT(watched, HasSubstr("coordinator unavailable; retrying"));
  EXPECT_THAT(watched, HasSubstr(id + " succeeded"));
  // Each epoch row shows once, the one reported before the kill included.
  size_t rows = 0;
  for (size_t at = 0; (at = watched.find("     8     2     ", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 2u) << watched;
  const nlohmann::json report = nlohmann::json::parse(RunCommand(Gantry(port, "--json report " + id), 30, false).output);
  EXPECT_EQ(report["epochs"].size(), 2u);
  EXPECT_EQ(report["job"]["attempts"], 1);
}

TEST(CoordinatorFailures, CallsWithoutTheTokenAreRefused) {
  const testing::Folders s = testing::MakeFolders("e2e_auth");
  const std::string token = "c0ffee0123456789c0ffee0123456789";
  std::ofstream(s.dir + "/token") << token << "\n";
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root, {"--token-file", s.dir + "/token"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const CommandResult refused = RunCommand(Gantry(port, "jobs"), 30);
  EXPECT_EQ(refused.exit_code, 4) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("token"));
  EXPECT_EQ(RunCommand(Gantry(port, "--token wrong-token-wrong-token jobs"), 30).exit_code, 4);
  EXPECT_EQ(RunCommand(Gantry(port, "--token " + token + " jobs"), 30).exit_code, 0);
  EXPECT_EQ(RunCommand(Gantry(port, "--token " + s.dir + "/token jobs"), 30).exit_code, 0);  // a token file
  EXPECT_EQ(RunCommand("env GANTRY_TOKEN=" + token + " " + Gantry(port, "jobs"), 30).exit_code, 0);
  testing::FakeWorkerGroup anonymous(coordinator.address(), 2);
  EXPECT_EQ(anonymous.Register().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  testing::FakeWorkerGroup member(coordinator.address(), 2, token);
  EXPECT_TRUE(member.Register().ok());
}

TEST(CoordinatorFailures, BadSubmissionsAreRefusedNamingTheField) {
  const testing::Folders s = testing::MakeFolders("e2e_refuse");
  std::filesystem::create_directories(s.dir + "/private");
  std::filesystem::create_symlink(s.dir + "/private", s.root + "/escape");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  CommandResult r = RunCommand(Gantry(port, "submit --data-dir " + s.data + " --lr -1"), 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("spec.lr"));
  r = RunCommand(Gantry(port, "submit --data-dir " + s.dir + "/private"), 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("spec.data_dir"));
  r = RunCommand(Gantry(port, "submit --data-dir " + s.root + "/escape"), 30);
  EXPECT_THAT(r.output, HasSubstr("outside the data roots"));
  r = RunCommand(Gantry(port, "submit --data-dir " + s.data + "/../../private"), 30);
  EXPECT_THAT(r.output, HasSubstr("outside the data roots"));
  r = RunCommand(Gantry(port, "submit --data-dir " + s.data + " --batch-size 1 --world-size 2"), 30);
  EXPECT_THAT(r.output, HasSubstr("world_size"));
  EXPECT_EQ(RunCommand(Gantry(port, "--json jobs"), 30, false).output, "{\"jobs\":[]}\n");
  EXPECT_EQ(RunCommand(Gantry(port, "submit --no-such-flag 1"), 30).exit_code, 2);
}

// Ordinary mistakes at the CLI end in exit 2 and a line naming the cause: never a gRPC
// abort (SIGABRT) on a token, never an uncaught exception on a folder.
TEST(CoordinatorFailures, OrdinaryCliMistakesExitTwoNamingTheCause) {
  const testing::Folders s = testing::MakeFolders("e2e_mistakes");
  const std::string token = "c0ffee0123456789c0ffee0123456789";
  std::ofstream(s.dir + "/token") << token << "\n";
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root, {"--token-file", s.dir + "/token"});
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  // A trailing newline or CR (from `$(cat tok)` plus a newline, or a Windows file) is trimmed.
  CommandResult r = RunCommand(Gantry(port, "--token \"" + token + "\n\" jobs"), 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = RunCommand("env GANTRY_TOKEN=\"$(printf '%s\\r' " + token + ")\" " + Gantry(port, "jobs"), 30);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Any other control character is refused by name before a call is made.
  r = RunCommand(Gantry(port, "--token \"$(printf 'c0ffee\\001zz0123456789')\" jobs"), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--token: the token holds a byte that is not printable ASCII (byte 0x01 at position 6"));
  r = RunCommand("env GANTRY_TOKEN=\"$(printf 'c0ffee\\033[0m')\" " + Gantry(port, "jobs"), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("GANTRY_TOKEN: the token holds"));

  const std::string auth = "--token " + token + " ";
  r = RunCommand(Gantry(port, auth + "submit " + s.data), 30);  // a folder as the run file
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(s.data + ": is a directory, expected a file"));
  r = RunCommand(Gantry(port, auth + "submit " + s.dir + "/no-such-run.yaml"), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;  // bad usage, not "job not found" (3)
  EXPECT_THAT(r.output, HasSubstr("no-such-run.yaml: cannot open run file"));
  std::ofstream(s.data + "/train-images-idx3-ubyte") << "x";
  r = RunCommand(Gantry(port, auth + "submit --data-dir " + s.data + "/train-images-idx3-ubyte"), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("is a file, expected a folder"));
  r = RunCommand(Gantry(port, auth + "submit --data-dir " + s.data + " --name \"$(printf 'a\\033[2J\\nb')\""), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("name: holds a control character"));
  EXPECT_EQ(RunCommand(Gantry(port, auth + "--json jobs"), 30, false).output, "{\"jobs\":[]}\n");

  for (const char* port_text : {"99999", "65536", "0"}) {
    r = RunCommand(absl::StrCat(GANTRY_CLI_BIN, " --coordinator 127.0.0.1:", port_text, " jobs"), 30);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(absl::StrCat("--coordinator 127.0.0.1:", port_text, ": port ")));
  }
}

TEST(CoordinatorFailures, StartUpProblemsAreNamed) {
  const testing::Folders s = testing::MakeFolders("e2e_startup");
  testing::CoordinatorProcess running(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(running.started());
  const std::string bin = GANTRY_COORDINATOR_BIN;
  CommandResult r = RunCommand(absl::StrCat(bin, " --listen ", running.address(), " --db ", s.dir,
                                            "/other.db --data-root ", s.root), 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--listen " + running.address()));
  r = RunCommand(absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", s.dir, "/missing/x.db --data-root ", s.root), 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--db"));
  r = RunCommand(absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", s.dir, "/x.db --data-root ", s.dir, "/nowhere"), 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--data-root"));
  // Without --data-root it serves Debian's dataset folder, and says so in --help.
  r = RunCommand(absl::StrCat(bin, " --help"), 30);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("/usr/share/datasets"));
  // gRPC would serve 99999 on 34463 (modulo 65536) and 65536 on a random port.
  for (const char* listen : {"127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:"}) {
    r = RunCommand(absl::StrCat(bin, " --listen ", listen, " --db ", s.dir, "/x.db --data-root ", s.root), 30);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(absl::StrCat("--listen ", listen, ": "))) << listen;
  }
  std::ofstream(s.dir + "/bad_token", std::ios::binary) << "c0ffee0123456789\x01" "c0ffee\n";
  r = RunCommand(absl::StrCat(bin, " --listen 127.0.0.1:0 --db ", s.dir, "/x.db --data-root ", s.root,
                              " --token-file ", s.dir, "/bad_token"),
                 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--token-file " + s.dir + "/bad_token: the token holds a byte"));
  const CommandResult unreachable = RunCommand(std::string(GANTRY_CLI_BIN) + " --coordinator 127.0.0.1:1 jobs", 30);
  EXPECT_EQ(unreachable.exit_code, 5);
  EXPECT_THAT(unreachable.output, HasSubstr("cannot reach the coordinator at 127.0.0.1:1"));
}

}  // namespace
}  // namespace gantry
