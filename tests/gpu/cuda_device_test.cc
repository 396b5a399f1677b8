// Device discovery: runs everywhere (no skip), since the no-device answer is what CPU
// machines rely on for the GPU tests' skip and for --device cuda's start-up error.
#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/cuda/cuda_device.h"

namespace gantry {
namespace {

// Both answers are checked: on a GPU machine the device must be usable and named (the
// other GPU tests run on it), elsewhere the refusal must say why.
TEST(CudaDeviceTest, VisibleOrAFailedPreconditionThatSaysWhy) {
  const absl::Status visible = cuda::DeviceVisible();
  if (visible.ok()) {
    EXPECT_EQ(testing::NoDeviceReason(), "");
    absl::StatusOr<int> count = cuda::VisibleDeviceCount();
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_GE(*count, 1);
    absl::StatusOr<int> selected = cuda::SelectDeviceForLocalRank(0);
    ASSERT_TRUE(selected.ok()) << selected.status();
    EXPECT_EQ(*selected, 0);
    EXPECT_NE(cuda::DeviceName(0), "unknown device");
    EXPECT_NE(cuda::PciBusId(0), "unknown bus");
    return;
  }
  EXPECT_EQ(visible.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(visible.message());
  EXPECT_TRUE(message.find("cudaGetDeviceCount") != std::string::npos || message == "0 CUDA devices") << message;
  EXPECT_EQ(testing::NoDeviceReason(), message);
  EXPECT_FALSE(cuda::VisibleDeviceCount().ok());
  EXPECT_FALSE(cuda::SelectDeviceForLocalRank(0).ok());
}

TEST(CudaDeviceTest, TheCudaBackendIsRegisteredButNotAHostBackend) {
  ASSERT_NE(FindBackend("cuda"), nullptr);
  EXPECT_EQ(FindBackend("cuda")->name(), "cuda");
  for (const std::string& name : BuiltBackendNames()) EXPECT_NE(name, "cuda");
  EXPECT_TRUE(BuiltWithCuda());
}

}  // namespace
}  // namespace gantry
