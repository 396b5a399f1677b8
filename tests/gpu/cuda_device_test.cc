// Device discovery: runs everywhere (no skip), since the no-device answer is what CPU
// machines rely on for the GPU tests' skip and for --device cuda's start-up error.
#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/cuda/cuda_device.h"

namespace gantry {
namespace {

TEST(CudaDeviceTest, VisibleOrAFailedPreconditionThatSaysWhy) {
  const absl::Status visible = cuda::DeviceVisible();
  if (visible.ok()) return;  // a GPU machine: the other tests run
  EXPECT_EQ(visible.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(visible.message());
  EXPECT_TRUE(message.find("cudaGetDeviceCount") != std::string::npos || message == "0 CUDA devices") << message;
  EXPECT_EQ(testing::NoDeviceReason(), message);
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
