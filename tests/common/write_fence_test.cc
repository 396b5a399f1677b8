#include "common/write_fence.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/write_fence_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string Read(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

FenceToken Token(int64_t epoch) { return {.epoch = epoch, .holder = absl::StrCat("attempt ", epoch)}; }

TEST(WriteFence, AClaimIsReadBackAndAStaleClaimIsRefused) {
  const std::string dir = FreshDir("claims");
  EXPECT_EQ(ReadFence(dir).epoch, 0) << "no fence file yet";
  ASSERT_TRUE(ClaimFence(dir, Token(2), 1).ok());
  EXPECT_EQ(ReadFence(dir).epoch, 2);
  EXPECT_EQ(ReadFence(dir).holder, "attempt 2");
  EXPECT_TRUE(ClaimFence(dir, Token(2), 1).ok()) << "the same claimant again: a retry";
  for (const FenceToken& stale : {Token(1), FenceToken{.epoch = 2, .holder = "another attempt 2"}}) {
    const absl::Status refused = ClaimFence(dir, stale, 1);
    EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
    EXPECT_THAT(refused.message(), HasSubstr("held at fencing epoch 2 (attempt 2)"));
  }
  EXPECT_EQ(ReadFence(dir).epoch, 2) << "a refused claim changes nothing";
  ASSERT_TRUE(ClaimFence(dir, Token(5), 1).ok());
  EXPECT_EQ(ReadFence(dir).epoch, 5);
}

TEST(WriteFence, NothingRegisteredHoldsNothing) {
  const absl::StatusOr<FenceHold> hold = HoldFenceFor(FreshDir("none") + "/file");
  ASSERT_TRUE(hold.ok());
  EXPECT_FALSE(hold->holds());
}

// Every writer of file_io.h, once a later epoch claimed the folder: ABORTED naming the
// new holder, and not a byte changed.
TEST(WriteFence, AWriterFencedOutWritesNothingMore) {
  const std::string dir = FreshDir("fenced");
  ASSERT_TRUE(ClaimFence(dir, Token(1), 1).ok());
  FencedFolder fence(dir, Token(1));
  ASSERT_TRUE(WriteFileAtomically(dir + "/a.txt", "first\n").ok());
  ASSERT_TRUE(AppendAndSync(dir + "/log.txt", "one\n").ok());
  ASSERT_TRUE(fence.Check().ok());

  ASSERT_TRUE(ClaimFence(dir, Token(2), 1).ok());
  const auto listing = [&] {
    std::string all;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      absl::StrAppend(&all, e.path().string(), "=", e.is_regular_file() ? Read(e.path().string()) : "<dir>", "\n");
    }
    return all;
  };
  const std::string before = listing();
  const std::vector<std::pair<std::string, absl::Status>> writes = {
      {"WriteFileAtomically", WriteFileAtomically(dir + "/a.txt", "second\n")},
      {"CreateFileAtomically", CreateFileAtomically(dir + "/b.txt", "new\n")},
      {"AppendAndSync", AppendAndSync(dir + "/log.txt", "two\n")},
      {"OpenForAppend", OpenForAppend(dir + "/c.txt").status()},
      {"CheckRoomToWrite", CheckRoomToWrite(dir + "/d.bin", 4096)},
      {"HoldFenceFor (nested path)", HoldFenceFor(dir + "/sub/deeper/e.bin").status()},
  };
  for (const auto& [what, status] : writes) {
    EXPECT_TRUE(absl::IsAborted(status)) << what << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr("now belongs to fencing epoch 2 (attempt 2)")) << what;
    EXPECT_THAT(status.message(), HasSubstr("epoch 1 (attempt 1) stops without writing another byte")) << what;
  }
  EXPECT_EQ(listing(), before);
  EXPECT_TRUE(absl::IsAborted(fence.Check()));
}

TEST(WriteFence, OnlyPathsUnderTheFolderAreFenced) {
  const std::string root = FreshDir("scope");
  const std::string dir = root + "/run";
  std::filesystem::create_directories(dir);
  std::filesystem::create_directories(root + "/run2");
  ASSERT_TRUE(ClaimFence(dir, Token(1), 1).ok());
  FencedFolder fence(dir, Token(1));
  ASSERT_TRUE(ClaimFence(dir, Token(2), 1).ok());
  EXPECT_TRUE(absl::IsAborted(WriteFileAtomically(dir + "/x", "x")));
  EXPECT_TRUE(WriteFileAtomically(root + "/run2/x", "x").ok()) << "a sibling whose name starts alike";
  EXPECT_TRUE(WriteFileAtomically(root + "/y", "y").ok()) << "the parent";
  // The same folder named through a relative path and a "..": fenced alike.
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(root);
  EXPECT_TRUE(absl::IsAborted(WriteFileAtomically("run2/../run/z", "z")));
  std::filesystem::current_path(cwd);
}

TEST(WriteFence, AFenceFileThatIsGoneFencesToo) {
  const std::string dir = FreshDir("gone");
  ASSERT_TRUE(ClaimFence(dir, Token(3), 1).ok());
  FencedFolder fence(dir, Token(3));
  ASSERT_TRUE(fence.Check().ok());
  std::filesystem::remove(dir + "/" + kFenceFileName);
  const absl::Status status = fence.Check();
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("is gone"));
}

// A claim waits for a write in flight under the old epoch (its shared hold), so a check
// and its write are never split by a claim; a claim that cannot get in is refused by time.
TEST(WriteFence, AClaimWaitsForAWriteInFlight) {
  const std::string dir = FreshDir("in_flight");
  ASSERT_TRUE(ClaimFence(dir, Token(1), 1).ok());
  FencedFolder fence(dir, Token(1));
  {
    absl::StatusOr<FenceHold> hold = fence.Hold();
    ASSERT_TRUE(hold.ok());
    EXPECT_TRUE(hold->holds());
    const absl::Status blocked = ClaimFence(dir, Token(2), 0.2);
    EXPECT_TRUE(absl::IsUnavailable(blocked)) << blocked;
    EXPECT_EQ(ReadFence(dir).epoch, 1);
    // Released from another thread's view: the claim gets in once the write ends.
    std::thread claimant([&] { EXPECT_TRUE(ClaimFence(dir, Token(2), 10).ok()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(ReadFence(dir).epoch, 1) << "still waiting for the hold";
    *hold = FenceHold();
    claimant.join();
  }
  EXPECT_EQ(ReadFence(dir).epoch, 2);
  EXPECT_TRUE(absl::IsAborted(fence.Check()));
}

}  // namespace
}  // namespace gantry
