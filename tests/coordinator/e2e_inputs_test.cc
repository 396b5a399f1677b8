// Hostile or mistaken inputs to the real binaries, each class with more than one case:
// text that is not UTF-8 (refused by flag, never a protobuf log line), durations that
// are not finite positive numbers, PEM files that are junk (named at once, never retried
// forever), a listening address without a port (never port 443 silently), and port files
// that would replace something the coordinator did not write.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

std::string ReadInputFile(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

TEST(CliInputs, TextThatIsNotUtf8IsRefusedNamingTheFlag) {
  const testing::Folders s = testing::MakeFolders("inputs_utf8");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases = {
      {"submit --dataset mnist --data-dir " + s.data + " --name \"$(printf 'run\\377')\"",
       "--name: not valid UTF-8 (byte 0xff at position 3)"},
      {"status \"$(printf 'job-\\3011')\"", "the job id: not valid UTF-8 (byte 0xc1 at position 4)"},
      {"cancel \"$(printf 'job-\\355\\240\\200')\"", "the job id: not valid UTF-8"},
      {"watch \"$(printf '\\200')\"", "the job id: not valid UTF-8 (byte 0x80 at position 0)"},
      {"report \"$(printf 'job-1\\376')\"", "the job id: not valid UTF-8"},
      {"submit --dataset mnist --data-dir \"$(printf '" + s.data + "\\377')\"", "--data-dir: not valid UTF-8"},
  };
  for (const Case& c : cases) {
    const CommandResult r = RunCommand(Gantry(port, c.args), 30);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.expected)) << c.args;
    EXPECT_THAT(r.output, Not(HasSubstr("protobuf"))) << c.args;
    EXPECT_THAT(r.output, Not(HasSubstr("serializ"))) << c.args;
  }
  EXPECT_EQ(RunCommand(Gantry(port, "--json jobs"), 30, false).output, "{\"jobs\":[]}\n");  // nothing submitted
}

TEST(CliInputs, DurationsMustBeFinitePositiveSeconds) {
  const testing::Folders s = testing::MakeFolders("inputs_durations");
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root);
  ASSERT_TRUE(coordinator.started());
  for (const char* value : {"inf", "NaN", "-1", "0", "1e400", "-inf", "abc"}) {
    const CommandResult r = RunCommand(Gantry(coordinator.port(), absl::StrCat("watch job-1 --for ", value)), 30);
    EXPECT_EQ(r.exit_code, 2) << value << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("--for")) << value;
  }
  for (const std::string args : {"watch job-1 --reconnect nan", "watch job-1 --reconnect -3", "--timeout inf jobs",
                                 "--timeout 0 jobs", "--timeout nan groups"}) {
    const CommandResult r = RunCommand(Gantry(coordinator.port(), args), 30);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  }
  // Still fine: a short watch of a job that does not exist is "not found", at once.
  const CommandResult r = RunCommand(Gantry(coordinator.port(), "watch job-9 --for 2.5"), 30);
  EXPECT_EQ(r.exit_code, 3) << r.output;
}

TEST(CliInputs, AJunkCaFileIsNamedAtOnce) {
  const testing::Folders s = testing::MakeFolders("inputs_tls_ca");
  std::ofstream(s.dir + "/junk.pem") << "this is not a certificate\n";
  std::ofstream(s.dir + "/cut.pem") << "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n";
  std::ofstream(s.dir + "/empty.pem").close();
  for (const char* name : {"junk.pem", "cut.pem", "empty.pem"}) {
    const std::string path = s.dir + "/" + name;
    const auto start = std::chrono::steady_clock::now();
    const CommandResult r = RunCommand(absl::StrCat(GANTRY_CLI_BIN, " --coordinator 127.0.0.1:1 --tls-ca ", path,
                                                    " watch job-1 --reconnect 600"),
                                       60);
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("--tls-ca " + path + ": ")) << name;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << name << ": retried";
  }
}

TEST(CoordinatorInputs, AddressesAndPemFilesAreCheckedAtStart) {
  const testing::Folders s = testing::MakeFolders("inputs_coordinator");
  const std::string bin = GANTRY_COORDINATOR_BIN;
  const std::string base = absl::StrCat(bin, " --db ", s.dir, "/g.db --data-root ", s.root);
  for (const char* listen : {"127.0.0.1", "[::1]", "localhost"}) {
    const CommandResult r = RunCommand(absl::StrCat(base, " --listen ", listen), 30);
    EXPECT_EQ(r.exit_code, 2) << listen << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(absl::StrCat("--listen ", listen, ": no port")));
  }
  CommandResult r = RunCommand(absl::StrCat(base, " --listen 127.0.0.1:0 --http-listen 127.0.0.1"), 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--http-listen 127.0.0.1: no port"));
  std::ofstream(s.dir + "/junk.pem") << "junk\n";
  r = RunCommand(absl::StrCat(base, " --listen 127.0.0.1:0 --tls-cert ", s.dir, "/junk.pem --tls-key ", s.dir,
                              "/junk.pem"),
                 30);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--tls-cert " + s.dir + "/junk.pem: holds no PEM block"));
  EXPECT_THAT(r.output, Not(HasSubstr("is the port in use")));
}

// gantry-coordinator --port-file F: F is created, or replaced when it holds a previous
// port; anything else stays exactly as it was and the coordinator does not start.
TEST(PortFile, NeverReplacesWhatTheCoordinatorDidNotWrite) {
  const testing::Folders s = testing::MakeFolders("inputs_port_file");
  const std::string db = s.dir + "/gantry.db";
  {
    testing::CoordinatorProcess first(s.dir, db, s.root);
    ASSERT_TRUE(first.started());
    const CommandResult r =
        RunCommand(Gantry(first.port(), "submit --dataset mnist --batch-size 8 --data-dir " + s.data), 30);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    first.process().Signal(SIGTERM);
    ASSERT_EQ(first.process().Wait(30), 0);
  }
  std::ofstream(s.dir + "/token") << "c0ffee0123456789c0ffee0123456789";
  std::ofstream(s.dir + "/notes.txt") << "my notes\n";
  fs::create_directories(s.dir + "/folder");
  fs::create_symlink(s.dir + "/notes.txt", s.dir + "/link");
  ASSERT_EQ(mkfifo((s.dir + "/fifo").c_str(), 0600), 0);
  const std::string base = absl::StrCat(GANTRY_COORDINATOR_BIN, " --listen 127.0.0.1:0 --db ", db, " --data-root ",
                                        s.root, " --token-file ", s.dir, "/token --port-file ");
  struct Case {
    std::string path, expected;
  };
  const std::vector<Case> cases = {
      {db, "is the file of --db"},
      {"/dev/null", "is a device"},
      {s.dir + "/token", "is the file of --token-file"},
      {s.dir + "/notes.txt", "does not hold what --port-file writes"},
      {s.dir + "/folder", "is a folder"},
      {s.dir + "/link", "is a symbolic link"},
      {s.dir + "/fifo", "is a FIFO"},
      {s.dir + "/p --http-listen 127.0.0.1:0 --http-port-file " + s.dir + "/p", "is the file of --http-port-file"},
  };
  const std::string db_before = ReadInputFile(db), notes_before = ReadInputFile(s.dir + "/notes.txt");
  for (const Case& c : cases) {
    const CommandResult r = RunCommand(base + c.path, 30);
    EXPECT_EQ(r.exit_code, 2) << c.path << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.expected)) << c.path;
    EXPECT_THAT(r.output, Not(HasSubstr("serving on port"))) << c.path;
  }
  EXPECT_EQ(ReadInputFile(db), db_before);
  EXPECT_EQ(ReadInputFile(s.dir + "/notes.txt"), notes_before);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_symlink(s.dir + "/link"));
  EXPECT_FALSE(fs::exists(s.dir + "/p"));
  // A previous run's port file is replaced, and the job survived every attempt above.
  const std::string previous = s.dir + "/previous-port";
  std::ofstream(previous) << "12345\n";
  testing::ChildProcess again({GANTRY_COORDINATOR_BIN, "--listen", "127.0.0.1:0", "--db", db, "--data-root", s.root,
                               "--port-file", previous},
                              s.dir + "/again.log");
  int port = 12345;
  for (int i = 0; i < 500 && port == 12345; ++i) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream(previous) >> port;
  }
  ASSERT_NE(port, 12345) << again.Log();
  EXPECT_THAT(RunCommand(Gantry(port, "jobs"), 30).output, HasSubstr("job-1"));
  again.Signal(SIGTERM);
  EXPECT_EQ(again.Wait(30), 0);
}

}  // namespace
}  // namespace gantry
