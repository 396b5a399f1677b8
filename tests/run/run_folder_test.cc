#include "worker/run/run_folder.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "worker/checkpoint/checkpoint_store.h"
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

// A pool job cut off from the coordinator past its lease: the coordinator gave it to
// another group, whose attempt continues in the same folder. Its claim shuts the earlier
// attempt out of every write of the folder at once, even while that attempt still holds
// the folder's lock; once it lets go, the later attempt opens the folder.
TEST(RunFolder, ALaterAttemptsClaimShutsTheEarlierOneOutOfEveryWrite) {
  const std::string dir = FreshDir("fenced");
  const RunFolderClaim first_claim{.token = {.epoch = 1, .holder = "job j attempt 1"}, .lock_wait_seconds = 0.2};
  const RunFolderClaim second_claim{.token = {.epoch = 2, .holder = "job j attempt 2"}, .lock_wait_seconds = 0.3};
  auto first = std::make_unique<RunFolder>(*RunFolder::Create(dir, &first_claim));
  ASSERT_TRUE(first->fence() != nullptr);
  ASSERT_TRUE(first->WriteRunJson("{}\n").ok());
  ASSERT_TRUE(first->AppendEpochRow(EpochRow{.batch_size = 8, .epoch = 1}).ok());
  CheckpointStore store(first->CheckpointDir());
  const std::vector<uint8_t> bytes = {1, 2, 3};
  ASSERT_TRUE(store.Save(4, bytes, 3, CheckpointExpectations{}).ok());
  EXPECT_EQ(FencedOutReason(dir, 1), "");

  // The first attempt still holds the folder's lock: the claim is written, the open waits
  // and gives up by time.
  const absl::StatusOr<RunFolder> waiting = RunFolder::Open(dir, &second_claim);
  EXPECT_TRUE(absl::IsFailedPrecondition(waiting.status())) << waiting.status();
  EXPECT_THAT(waiting.status().message(), HasSubstr("still after 0.3 s"));
  EXPECT_THAT(FencedOutReason(dir, 1), HasSubstr("was claimed by fencing epoch 2 (job j attempt 2), so epoch 1 stops"));
  EXPECT_EQ(FencedOutReason(dir, 2), "");

  std::string before;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    absl::StrAppend(&before, e.path().string(), "=", e.is_regular_file() ? ReadAll(e.path().string()) : "/", "\n");
  }
  const std::vector<std::pair<std::string, absl::Status>> writes = {
      {"WriteRunJson", first->WriteRunJson("{\"x\": 1}\n")},
      {"AppendEpochRow", first->AppendEpochRow(EpochRow{.batch_size = 8, .epoch = 2})},
      {"AppendStragglerRow", first->AppendStragglerRow(StragglerEvent{}, 8, 2)},
      {"ResetRows", first->ResetRows({}, "")},
      {"SamplePath (a sweep's folder)", first->SamplePath(16, true, 2, "png").status()},
      {"CheckpointStore::Save", store.Save(8, bytes, 3, CheckpointExpectations{})},
  };
  for (const auto& [what, status] : writes) {
    EXPECT_TRUE(absl::IsAborted(status)) << what << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("now belongs to fencing epoch 2 (job j attempt 2)")) << what;
  }
  std::string after;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    absl::StrAppend(&after, e.path().string(), "=", e.is_regular_file() ? ReadAll(e.path().string()) : "/", "\n");
  }
  EXPECT_EQ(after, before) << "not a byte written after the claim";

  first.reset();  // the earlier attempt stops and lets go
  const absl::StatusOr<RunFolder> second = RunFolder::Open(dir, &second_claim);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->AppendEpochRow(EpochRow{.batch_size = 8, .epoch = 2}).ok());
  // The earlier attempt, were it to come back, cannot claim the folder again.
  const absl::StatusOr<RunFolder> stale = RunFolder::Open(dir, &first_claim);
  EXPECT_TRUE(absl::IsFailedPrecondition(stale.status())) << stale.status();
  EXPECT_THAT(stale.status().message(), HasSubstr("a later attempt owns the folder"));
}

}  // namespace
}  // namespace gantry
