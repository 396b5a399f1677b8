#include "common/file_io.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace gantry {
namespace {

std::string ReadAll(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

TEST(WriteFileAtomically, ReplacesWholeFileAndLeavesNoTemporary) {
  const std::string dir = ::testing::TempDir() + "/file_io_atomic";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "first version, longer").ok());
  ASSERT_TRUE(WriteFileAtomically(path, {ByteSpan{"sec", 3}, ByteSpan{"ond", 3}}).ok());
  EXPECT_EQ(ReadAll(path), "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
}

TEST(WriteFileAtomically, FailureNamesTheFileAndKeepsTheOld) {
  const absl::Status s = WriteFileAtomically("/nonexistent-dir/x.txt", "data");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("/nonexistent-dir/x.txt"), std::string::npos);
}

TEST(AppendAndSync, Appends) {
  const std::string path = ::testing::TempDir() + "/file_io_append.txt";
  std::filesystem::remove(path);
  ASSERT_TRUE(AppendAndSync(path, "a\n").ok());
  ASSERT_TRUE(AppendAndSync(path, "b\n").ok());
  EXPECT_EQ(ReadAll(path), "a\nb\n");
}

TEST(FileError, HintsAtTheFix) {
  EXPECT_NE(std::string(FileError("/x", "write failed", ENOSPC).message()).find("disk is full"), std::string::npos);
  EXPECT_NE(std::string(FileError("/x", "cannot create", EROFS).message()).find("not writable"), std::string::npos);
}

}  // namespace
}  // namespace gantry
