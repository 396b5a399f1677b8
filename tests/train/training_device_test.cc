// --device: cpu resolves; cuda is refused at start-up on every machine for now, with the
// reason and the fix (no CUDA in the build, no device visible, or GPU training not
// implemented); anything else is a bad value.
#include "worker/train/training_device.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/tensor/tensor.h"
#include "worker/train/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(TrainingDevice, CpuResolvesAndIsTheDefault) {
  EXPECT_TRUE(CheckTrainingDevice("cpu").ok());
  const auto c = ResolveTrainConfig({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device, "cpu");
}

TEST(TrainingDevice, CudaIsRefusedWithTheReasonAndTheFix) {
  const absl::Status s = CheckTrainingDevice("cuda");
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--device cuda: "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("use --device cpu"));
  if (!BuiltWithCuda()) {
    EXPECT_THAT(std::string(s.message()), HasSubstr("built without CUDA"));
  }
}

TEST(TrainingDevice, OtherNamesAreBadValues) {
  const absl::Status s = CheckTrainingDevice("gpu");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("one of cpu, cuda"));
}

}  // namespace
}  // namespace gantry
