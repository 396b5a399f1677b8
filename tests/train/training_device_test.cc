// --device: cpu resolves and opens the --kernels backend with no second communicator;
// cuda resolves only in a CUDA build with a visible device, and is otherwise refused
// with the reason and the fix; anything else is a bad value.
#include "worker/train/training_device.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/tensor.h"
#if GANTRY_HAVE_CUDA
#include "worker/tensor/cuda/cuda_device.h"
#endif
#include "runspec/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(TrainingDevice, CpuResolvesAndIsTheDefault) {
  EXPECT_TRUE(CheckTrainingDevice("cpu").ok());
  const auto c = ResolveTrainConfig({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device, "cpu");
}

TEST(TrainingDevice, CudaNeedsACudaBuildAndAVisibleDevice) {
  const absl::Status s = CheckTrainingDevice("cuda");
  if (!BuiltWithCuda()) {
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("built without CUDA"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("use --device cpu"));
    return;
  }
#if GANTRY_HAVE_CUDA
  if (cuda::DeviceVisible().ok()) {
    EXPECT_TRUE(s.ok()) << s;
    return;
  }
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--device cuda: no CUDA device visible ("));
  EXPECT_THAT(std::string(s.message()), HasSubstr("use --device cpu"));
#endif
}

TEST(TrainingDevice, TheCpuTrainsWithTheKernelsBackendAndTheJobsCommunicator) {
  TrainConfig config;
  config.kernels = "eigen";
  LocalGroup group(1);
  std::unique_ptr<Communicator> comm = group.Rank(0);
  absl::StatusOr<TrainingDevice> d = OpenTrainingDevice(config, *comm, CommOptions{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->backend, FindBackend("eigen"));
  EXPECT_EQ(d->backend->device(), Device::kCpu);
  EXPECT_EQ(d->gradient_comm, nullptr);
  EXPECT_EQ(d->description, "cpu (eigen kernels)");
}

TEST(TrainingDevice, SettingsResolveCudaWithoutAGpuBecauseTheCoordinatorHasNone) {
  const auto c = ResolveTrainConfig({{"device", "cuda"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device, "cuda");
}

TEST(TrainingDevice, OpeningCudaWhereItCannotRunNamesTheRankAndTheFix) {
  if (CheckTrainingDevice("cuda").ok()) GTEST_SKIP() << "a CUDA device is visible here";
  TrainConfig config;
  config.device = "cuda";
  LocalGroup group(1);
  std::unique_ptr<Communicator> comm = group.Rank(0);
  bool out_of_step = true;
  absl::StatusOr<TrainingDevice> d = OpenTrainingDevice(config, *comm, CommOptions{}, &out_of_step);
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("rank 0: --device cuda: "));
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("use --device cpu"));
  EXPECT_FALSE(out_of_step) << "every rank refused alike: the ranks are in step";
}

TEST(TrainingDevice, ARankDescribesTheGpuItWouldTrainOnOrCpu) {
  LocalGroup group(1);
  std::unique_ptr<Communicator> comm = group.Rank(0);
  const std::string described = DescribeRankDevice(*comm);
  if (CheckTrainingDevice("cuda").ok()) {
    EXPECT_THAT(described, ::testing::StartsWith("cuda:0 "));
  } else {
    EXPECT_EQ(described, "cpu");
  }
}

TEST(TrainingDevice, OtherNamesAreBadValues) {
  const absl::Status s = CheckTrainingDevice("gpu");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("one of cpu, cuda"));
  const auto c = ResolveTrainConfig({{"device", "gpu"}});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("gpu"));
}

}  // namespace
}  // namespace gantry
