#include "worker/run/run_folder.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/run_folder_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(RunFolder, WritesRowsWithOneHeader) {
  const auto folder = RunFolder::Create(FreshDir("rows"));
  ASSERT_TRUE(folder.ok()) << folder.status();
  EpochRow row;
  row.batch_size = 64;
  row.epoch = 1;
  row.seconds = 2.5;
  ASSERT_TRUE(folder->AppendEpochRow(row).ok());
  row.epoch = 2;
  ASSERT_TRUE(folder->AppendEpochRow(row).ok());
  const std::string csv = ReadAll(folder->File("epochs.csv"));
  EXPECT_EQ(csv.find("batch_size,epoch,seconds,steady_step_ms,samples_per_s,d_loss,g_loss"), 0u);
  EXPECT_EQ(csv.find("batch_size", 1), std::string::npos);
  EXPECT_THAT(csv, HasSubstr("\n64,2,2.500,"));
}

TEST(RunFolder, RefusesToOverwriteARun) {
  const std::string dir = FreshDir("existing");
  ASSERT_TRUE(RunFolder::Create(dir)->AppendEpochRow(EpochRow{}).ok());
  const auto again = RunFolder::Create(dir);
  EXPECT_THAT(again.status().message(), HasSubstr("already holds a run"));
}

// Issue 29, item 9: a new run writes only into a new folder, an empty one, or one a run
// started in; a folder of the user's is refused by name, its files untouched.
TEST(RunFolder, ANewRunRefusesAFolderHoldingSomeoneElsesFiles) {
  const std::string dir = FreshDir("users");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/notes.txt") << "mine";
  const auto refused = RunFolder::Create(dir);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr(dir + ": holds notes.txt, which is not a run's file"));
  EXPECT_EQ(ReadAll(dir + "/notes.txt"), "mine");
  EXPECT_FALSE(std::filesystem::exists(dir + "/samples"));
  // One more: a file under the folder's own name.
  const std::string file = FreshDir("a_file");
  std::ofstream(file) << "mine";
  EXPECT_THAT(RunFolder::Create(file).status().message(), HasSubstr("exists and is not a folder"));
  EXPECT_EQ(ReadAll(file), "mine");
  // A folder a run started in (run.json and log.txt, no epoch yet) is taken again.
  const std::string started = FreshDir("started");
  std::filesystem::create_directories(started + "/samples");
  std::ofstream(started + "/run.json") << "{}";
  std::ofstream(started + "/log.txt") << "a first attempt";
  EXPECT_TRUE(RunFolder::Create(started).ok());
}

// Issue 29, item 2: entries with a run's names that are not what the names say are refused
// by name before the run opens them (a folder named log.txt aborted train; a FIFO would
// hang it; a link named log.txt would append to wherever it points).
TEST(RunFolder, EntriesThatAreNotWhatTheirNamesSayAreRefusedByName) {
  const struct {
    const char* name;
    std::function<void(const std::string&)> make;
    const char* says;
  } cases[] = {
      {"log.txt", [](const std::string& p) { std::filesystem::create_directories(p); }, "is a folder"},
      {"log.txt", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); }, "is not a file"},
      {"log.txt", [](const std::string& p) { std::filesystem::create_symlink("/etc/hostname", p); },
       "is a symbolic link"},
      {"epochs.csv", [](const std::string& p) { std::filesystem::create_directories(p); }, "is a folder"},
      {"samples", [](const std::string& p) { std::ofstream(p) << "x"; }, "is not a folder"},
      {"checkpoints", [](const std::string& p) { std::filesystem::create_symlink(p, p); }, "cannot be followed"},
  };
  int n = 0;
  for (const auto& c : cases) {
    const std::string dir = FreshDir(absl::StrCat("kinds_", n++));
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/run.json") << "{}";
    c.make(dir + "/" + c.name);
    const std::string what = absl::StrCat(dir, "/", c.name, ": ", c.says);
    const absl::Status created = RunFolder::Create(dir).status();
    if (std::string(c.name) != "epochs.csv") EXPECT_THAT(created.message(), HasSubstr(what)) << c.name;
    EXPECT_FALSE(created.ok()) << c.name;
    EXPECT_THAT(RunFolder::Open(dir).status().message(), HasSubstr(what)) << c.name;
  }
}

TEST(RunFolder, TheWritabilityProbeNeverTouchesAnExistingFile) {
  const std::string dir = FreshDir("probe");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/run.json") << "{}";
  std::ofstream(dir + "/.write-probe") << "someone's";
  ASSERT_TRUE(RunFolder::Open(dir).ok());
  EXPECT_EQ(ReadAll(dir + "/.write-probe"), "someone's");
}

TEST(RunFolder, UnwritablePlaceIsAClearError) {
  const auto folder = RunFolder::Create("/proc/gantry-cannot-be-here");
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.status().message(), HasSubstr("/proc/gantry-cannot-be-here"));
  EXPECT_THAT(RunFolder::Create("").status().message(), HasSubstr("--out"));
}

TEST(RunFolder, SamplePathsPerSweep) {
  const auto folder = RunFolder::Create(FreshDir("samples"));
  ASSERT_TRUE(folder.ok());
  EXPECT_THAT(*folder->SamplePath(64, false, 3, "png"), ::testing::EndsWith("/samples/epoch_003.png"));
  const std::string swept = *folder->SamplePath(128, true, 12, "npy");
  EXPECT_THAT(swept, ::testing::EndsWith("/samples/b0128/epoch_012.npy"));
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::path(swept).parent_path()));
}

TEST(RunFolder, RefusesAFolderHoldingCheckpoints) {
  const std::string dir = FreshDir("with_checkpoints");
  std::filesystem::create_directories(dir + "/checkpoints");
  EXPECT_TRUE(RunFolder::Create(dir).ok());  // an empty checkpoint folder is no run
  std::ofstream(dir + "/checkpoints/ckpt-5.bin") << "x";
  EXPECT_THAT(RunFolder::Create(dir).status().message(),
              HasSubstr("already holds a run's checkpoints; continue it with --resume " + dir));
}

TEST(RunFolder, OpenNeedsARunJson) {
  const std::string dir = FreshDir("open");
  std::filesystem::create_directories(dir);
  EXPECT_EQ(RunFolder::Open(dir).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(RunFolder::Open(dir).status().message(), HasSubstr(dir + ": not a run folder (no run.json)"));
  std::ofstream(dir + "/run.json") << "{}";
  const auto folder = RunFolder::Open(dir);
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ(folder->CheckpointDir(), dir + "/checkpoints");
}

TEST(RunFolder, ResetRowsDropsRowsWrittenAfterTheCheckpoint) {
  const auto folder = RunFolder::Create(FreshDir("reset"));
  ASSERT_TRUE(folder.ok());
  EpochRow row;
  row.batch_size = 8;
  for (int e = 1; e <= 3; ++e) {
    row.epoch = e;
    ASSERT_TRUE(folder->AppendEpochRow(row).ok());
  }
  ASSERT_TRUE(folder->AppendStragglerRow(StragglerEvent{}, 8, 3).ok());
  row.epoch = 1;
  EpochRow second = row;
  second.epoch = 2;
  ASSERT_TRUE(folder->ResetRows({row, second}, "8,2,7,1,3.000,1.000,3.000\n").ok());
  const std::string csv = ReadAll(folder->File("epochs.csv"));
  EXPECT_EQ(csv, EpochCsvHeader() + "\n" + EpochCsvLine(row) + "\n" + EpochCsvLine(second) + "\n");
  EXPECT_EQ(ReadAll(folder->File("stragglers.csv")), StragglerCsvHeader() + "\n8,2,7,1,3.000,1.000,3.000\n");
  ASSERT_TRUE(folder->ResetRows({}, "").ok());  // resumed before the first epoch ended
  EXPECT_FALSE(std::filesystem::exists(folder->File("epochs.csv")));
  EXPECT_FALSE(std::filesystem::exists(folder->File("stragglers.csv")));
}

}  // namespace
}  // namespace gantry
