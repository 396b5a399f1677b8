#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
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

// ReadFileBytes(path)'s error message, read by an unprivileged user: root reads any
// file, so as root the call runs in a child that has dropped to nobody (65534).
std::string UnprivilegedReadError(const std::string& path) {
  if (::geteuid() != 0) return std::string(ReadFileBytes(path).status().message());
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    std::string message = "could not drop privileges";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) message = std::string(ReadFileBytes(path).status().message());
    if (::write(fds[1], message.data(), message.size()) < 0) _exit(1);
    _exit(0);
  }
  ::close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) message.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return message;
}

TEST(ReadFileBytes, APermissionErrorSaysNotReadable) {
  const std::string path = ::testing::TempDir() + "/file_io_unreadable.yaml";
  std::filesystem::remove(path);
  std::ofstream(path) << "seed: 1\n";
  std::filesystem::permissions(path, std::filesystem::perms::none);
  const std::string message = UnprivilegedReadError(path);
  EXPECT_THAT(message, ::testing::HasSubstr(path + ": cannot open: Permission denied (not readable"));
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("writable")));
}

TEST(ReadFileBytes, RefusesFoldersAndOversizedFilesBeforeReading) {
  const std::string dir = ::testing::TempDir() + "/file_io_folder";
  std::filesystem::create_directories(dir);
  EXPECT_THAT(ReadFileBytes(dir).status().message(), ::testing::HasSubstr("is a directory, expected a file"));
  // A sparse 64 MiB file: refused on its size, without reading (or allocating) it.
  const std::string big = ::testing::TempDir() + "/file_io_sparse.bin";
  std::filesystem::remove(big);
  std::ofstream(big).close();
  std::filesystem::resize_file(big, 64u << 20);
  const absl::StatusOr<std::vector<uint8_t>> refused = ReadFileBytes(big, 1 << 20);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("67108864 bytes, more than the 1048576"));
}


// A sparse file far larger than memory (a 100 GB "checkpoint") is refused by its size,
// before a byte is read, even when the caller set no limit of its own.
TEST(ReadFileBytes, AFileLargerThanMemoryIsRefusedByName) {
  const std::string path = ::testing::TempDir() + "/file_io_sparse.bin";
  std::filesystem::remove(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const int truncated = ::ftruncate(fd, off_t{1} << 42);  // 4 TiB, sparse (ext4 holds up to 16 TiB)
  ::close(fd);
  if (truncated != 0) GTEST_SKIP() << "this filesystem holds no sparse file that large";
  const absl::StatusOr<std::vector<uint8_t>> bytes = ReadFileBytes(path);
  EXPECT_TRUE(absl::IsInvalidArgument(bytes.status()));
  EXPECT_THAT(bytes.status().message(), ::testing::HasSubstr(path));
  EXPECT_THAT(bytes.status().message(), ::testing::HasSubstr("this machine has available"));
  std::filesystem::remove(path);
}

// Appending never waits on a FIFO, never writes through a link, and names what is wrong.
TEST(OpenForAppend, OnlyARegularFileIsAppendedTo) {
  const std::string dir = ::testing::TempDir() + "/file_io_append_kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/folder");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::ofstream(dir + "/target") << "the user's";
  std::filesystem::create_symlink(dir + "/target", dir + "/link");
  for (const char* name : {"fifo", "folder", "link"}) {
    const absl::Status s = AppendAndSync(dir + "/" + name, "row\n");
    EXPECT_FALSE(s.ok()) << name;
    EXPECT_THAT(s.message(), ::testing::HasSubstr(dir + "/" + name)) << name;
  }
  EXPECT_EQ(ReadAll(dir + "/target"), "the user's");
  const absl::StatusOr<int> fd = OpenForAppend(dir + "/new.csv");
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);
}

TEST(CreateFileAtomically, NeverReplacesWhatIsThere) {
  const std::string path = ::testing::TempDir() + "/file_io_create.bin";
  std::filesystem::remove(path);
  ASSERT_TRUE(CreateFileAtomically(path, {ByteSpan{"one", 3}}).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(CreateFileAtomically(path, {ByteSpan{"two", 3}})));
  EXPECT_EQ(ReadAll(path), "one");
}

TEST(PublishWithoutReplacing, MovesTheFileOnlyWhereNothingIs) {
  const std::string dir = ::testing::TempDir() + "/file_io_publish";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string tmp = dir + "/out.tmp", path = dir + "/out.bin";
  std::ofstream(tmp) << "new";
  ASSERT_TRUE(PublishWithoutReplacing(tmp, path).ok());
  EXPECT_EQ(ReadAll(path), "new");
  EXPECT_FALSE(std::filesystem::exists(tmp));

  // A file, a folder and a dangling link at `path` are each left alone, and so is tmp.
  std::ofstream(tmp) << "newer";
  const absl::Status over_file = PublishWithoutReplacing(tmp, path);
  EXPECT_TRUE(absl::IsAlreadyExists(over_file)) << over_file;
  EXPECT_THAT(std::string(over_file.message()), ::testing::HasSubstr(path));
  EXPECT_EQ(ReadAll(path), "new");
  EXPECT_EQ(ReadAll(tmp), "newer");
  const std::string link = dir + "/dangling";
  std::filesystem::create_symlink(dir + "/nowhere", link);
  EXPECT_TRUE(absl::IsAlreadyExists(PublishWithoutReplacing(tmp, link)));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  std::filesystem::create_directory(dir + "/folder");
  EXPECT_TRUE(absl::IsAlreadyExists(PublishWithoutReplacing(tmp, dir + "/folder")));
  EXPECT_EQ(ReadAll(tmp), "newer");
}

}  // namespace
}  // namespace gantry
