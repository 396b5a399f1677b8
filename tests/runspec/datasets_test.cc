#include "runspec/datasets.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(DefaultDataDir, OnlyFashionMnistHasOne) {
  EXPECT_EQ(DefaultDataDir("fashion-mnist"), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(DefaultDataDir("mnist"), "");
}

TEST(Datasets, FlowIsKnownAndHasNoDefaultFolder) {
  const auto& names = DatasetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "flow"), names.end());
  EXPECT_EQ(DefaultDataDir("flow"), "");
}

TEST(CheckDatasetFitsModel, FlowGoesWithTheConditionalModelOnly) {
  EXPECT_TRUE(CheckDatasetFitsModel("mnist", "dcgan", "").ok());
  EXPECT_TRUE(CheckDatasetFitsModel("flow", "pix2pix", "/data/flow").ok());
  EXPECT_THAT(CheckDatasetFitsModel("flow", "dcgan", "/d").message(), HasSubstr("use --model pix2pix"));
  EXPECT_THAT(CheckDatasetFitsModel("fashion-mnist", "pix2pix", "").message(), HasSubstr("use --dataset flow"));
  const absl::Status no_dir = CheckDatasetFitsModel("flow", "pix2pix", "");
  EXPECT_TRUE(absl::IsInvalidArgument(no_dir));
  EXPECT_THAT(no_dir.message(), HasSubstr("give --data-dir"));
}

}  // namespace
}  // namespace gantry
