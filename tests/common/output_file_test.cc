// An output file the user named (gantry-coordinator --port-file F) is written only where
// nothing of the user's can be lost: a new file, or a previous run's output; never a
// folder, device, FIFO, symbolic link, one of the program's other files, or a file whose
// contents are the user's. A refused path is left exactly as it was.
#include "common/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_io.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadOutputFile(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

std::string Folder(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

OutputFileRules PortFile(const std::string& db) { return {"--port-file", {{"--db", db}}, HoldsOnlyANumber}; }

TEST(OutputFile, CreatesANewFileAndReplacesAPreviousOutput) {
  const std::string dir = Folder("output_new");
  ASSERT_TRUE(WriteOutputFile(dir + "/port", "50051\n", PortFile(dir + "/g.db")).ok());
  EXPECT_EQ(ReadOutputFile(dir + "/port"), "50051\n");
  ASSERT_TRUE(WriteOutputFile(dir + "/port", "50052\n", PortFile(dir + "/g.db")).ok());
  EXPECT_EQ(ReadOutputFile(dir + "/port"), "50052\n");
  std::ofstream(dir + "/empty").close();  // `touch F` before the run
  EXPECT_TRUE(WriteOutputFile(dir + "/empty", "7\n", PortFile(dir + "/g.db")).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);  // no temporary left
}

TEST(OutputFile, NeverTouchesWhatIsNotAPreviousOutput) {
  const std::string dir = Folder("output_refused");
  const std::string db = dir + "/g.db";
  std::ofstream(db) << "SQLite format 3";
  std::ofstream(dir + "/notes.txt") << "my notes\n";
  std::ofstream(dir + "/big") << std::string(10000, '1');
  fs::create_directories(dir + "/folder");
  fs::create_symlink(dir + "/notes.txt", dir + "/link");
  fs::create_symlink(dir + "/nowhere", dir + "/dangling");
  fs::create_hard_link(db, dir + "/db-alias");
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  struct Case {
    std::string path, expected;
  };
  const std::vector<Case> cases = {
      {db, "is the file of --db " + db},
      {dir + "/db-alias", "is the file of --db"},       // the database under another name
      {dir + "/g.db-wal", ""},                           // set below: a file SQLite would write
      {"/dev/null", "is a device"},
      {dir + "/folder", "is a folder"},
      {dir + "/fifo", "is a FIFO"},
      {dir + "/link", "is a symbolic link"},
      {dir + "/dangling", "is a symbolic link"},
      {dir + "/notes.txt", "does not hold what --port-file writes"},
      {dir + "/big", "does not hold what --port-file writes"},
  };
  OutputFileRules rules = PortFile(db);
  rules.others.push_back({"--db", db + "-wal"});
  for (const Case& c : cases) {
    struct stat before {};
    const bool existed = lstat(c.path.c_str(), &before) == 0;
    const std::string contents = existed && S_ISREG(before.st_mode) ? ReadOutputFile(c.path) : "";
    const absl::Status s = WriteOutputFile(c.path, "50051\n", rules);
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << c.path << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--port-file " + c.path + ": ")) << c.path;
    if (!c.expected.empty()) {
      EXPECT_THAT(std::string(s.message()), HasSubstr(c.expected)) << c.path;
    }
    struct stat after {};
    EXPECT_EQ(lstat(c.path.c_str(), &after) == 0, existed) << c.path;
    if (existed) {
      EXPECT_EQ(after.st_ino, before.st_ino) << c.path << " was replaced";
      EXPECT_EQ(after.st_mode, before.st_mode) << c.path;
      if (S_ISREG(before.st_mode)) {
        EXPECT_EQ(ReadOutputFile(c.path), contents) << c.path;
      }
    }
  }
  EXPECT_FALSE(fs::exists(dir + "/g.db-wal"));
}

TEST(CreateFileAtomically, NeverReplacesAnything) {
  const std::string dir = Folder("create_atomic");
  ASSERT_TRUE(CreateFileAtomically(dir + "/a", "first").ok());
  const absl::Status again = CreateFileAtomically(dir + "/a", "second");
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_EQ(ReadOutputFile(dir + "/a"), "first");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace gantry
