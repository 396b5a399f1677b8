// An output folder the user names is filled only when it is new or empty: anything there
// is the user's and stays, refused by name before any work.
#include "common/output_folder.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Fresh(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/output_folder_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(OutputFolder, NewOrEmptyIsFree) {
  const std::string dir = Fresh("free");
  EXPECT_TRUE(CheckNewOutputFolder("--out", dir + "/new", "make-flow").ok());
  EXPECT_TRUE(CheckNewOutputFolder("--out", dir, "make-flow").ok());
  EXPECT_TRUE(CreateOutputFolder("--out", dir + "/a/b").ok());
  EXPECT_TRUE(fs::is_directory(dir + "/a/b"));
}

TEST(OutputFolder, AnythingThereIsRefusedByNameAndLeftAlone) {
  const std::string dir = Fresh("taken");
  std::ofstream(dir + "/frames.npy") << "the user's";
  absl::Status s = CheckNewOutputFolder("--out", dir, "make-flow");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("--out " + dir + " exists and is not an empty folder (it holds frames.npy)"));
  EXPECT_THAT(s.message(), HasSubstr("make-flow never writes over files"));
  s = CheckNewOutputFolder("--out", dir + "/frames.npy", "rollout");
  EXPECT_THAT(s.message(), HasSubstr("is a file, not a folder"));
  fs::create_directory_symlink(dir, dir + "/link");
  EXPECT_THAT(CheckNewOutputFolder("--out", dir + "/link", "rollout").message(), HasSubstr("symbolic link"));
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_THAT(CheckNewOutputFolder("--out", dir + "/fifo", "rollout").message(), HasSubstr("not a folder"));
  // Below a file: the path cannot even be looked at.
  EXPECT_FALSE(CheckNewOutputFolder("--out", dir + "/frames.npy/case-000", "make-flow").ok());
  EXPECT_FALSE(CheckNewOutputFolder("--out", "", "make-flow").ok());
}

}  // namespace
}  // namespace gantry
