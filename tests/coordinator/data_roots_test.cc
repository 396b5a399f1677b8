#include "coordinator/validation/data_roots.h"

#include <unistd.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DataRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("roots");
    fs::create_directories(dir_ + "/data/mnist");
    fs::create_directories(dir_ + "/data2/mnist");
    fs::create_directories(dir_ + "/secret");
    absl::StatusOr<DataRoots> roots = DataRoots::Create({dir_ + "/data"});
    ASSERT_TRUE(roots.ok()) << roots.status();
    roots_ = std::make_unique<DataRoots>(*roots);
  }
  std::string dir_;
  std::unique_ptr<DataRoots> roots_;
};

TEST_F(DataRootsTest, PathsInsideARootResolve) {
  absl::StatusOr<std::string> p = roots_->Confine("spec.data_dir", dir_ + "/data/./mnist/");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, fs::canonical(dir_ + "/data/mnist").string());
  EXPECT_TRUE(roots_->Confine("spec.data_dir", dir_ + "/data").ok());
}

TEST_F(DataRootsTest, DotDotEscapesAreRefused) {
  absl::StatusOr<std::string> p = roots_->Confine("spec.data_dir", dir_ + "/data/../secret");
  ASSERT_TRUE(absl::IsInvalidArgument(p.status()));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("spec.data_dir"));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("outside the data roots"));
}

TEST_F(DataRootsTest, SymlinkEscapesAreRefused) {
  ASSERT_EQ(symlink((dir_ + "/secret").c_str(), (dir_ + "/data/link").c_str()), 0);
  EXPECT_TRUE(absl::IsInvalidArgument(roots_->Confine("spec.data_dir", dir_ + "/data/link").status()));
}

TEST_F(DataRootsTest, ASiblingWithTheRootAsPrefixIsOutside) {
  EXPECT_TRUE(absl::IsInvalidArgument(roots_->Confine("spec.data_dir", dir_ + "/data2/mnist").status()));
}

TEST_F(DataRootsTest, RelativeAndMissingPathsAreRefused) {
  absl::StatusOr<std::string> rel = roots_->Confine("spec.data_dir", "data/mnist");
  EXPECT_THAT(std::string(rel.status().message()), HasSubstr("must be an absolute path"));
  absl::StatusOr<std::string> missing = roots_->Confine("spec.data_dir", dir_ + "/data/nope");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("does not resolve"));
}

TEST_F(DataRootsTest, RootsMustExist) {
  absl::StatusOr<DataRoots> none = DataRoots::Create({});
  EXPECT_TRUE(absl::IsInvalidArgument(none.status()));
  absl::StatusOr<DataRoots> missing = DataRoots::Create({dir_ + "/nowhere"});
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("--data-root"));
}

}  // namespace
}  // namespace gantry
