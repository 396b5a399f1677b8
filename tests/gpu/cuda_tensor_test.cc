// Device tensors: allocation (zeroed or not), copies between host and device in every
// direction, views, Fill, Clone, and the caching allocator's reuse.
#include <cstring>

#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cuda/cuda_memory.h"

namespace gantry {
namespace {

using testing::RandomTensor;
using testing::ToGpu;
using testing::ToHost;

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(CudaTensorTest, RoundTripsAndViewsKeepEveryByte) {
  GANTRY_CUDA_OR_SKIP();
  const Tensor host = RandomTensor(Shape{7, 9, 13}, 1);
  const Tensor gpu = ToGpu(host);
  EXPECT_EQ(gpu.device(), Device::kCuda);
  EXPECT_TRUE(SameBytes(ToHost(gpu), host));
  EXPECT_TRUE(SameBytes(ToHost(gpu.Clone()), host));  // device -> device
  EXPECT_TRUE(SameBytes(ToHost(gpu.Slice(2, 5)), host.Slice(2, 5).Clone()));
  Tensor target = Tensor::Zeros(Shape{7, 9, 13}, DType::kF32, Device::kCuda);
  target.Slice(1, 3).CopyFrom(host.Slice(4, 6));  // host view -> device view
  const Tensor back = ToHost(target);
  EXPECT_TRUE(SameBytes(back.Slice(1, 3).Clone(), host.Slice(4, 6).Clone()));
  EXPECT_EQ(back.at(0), 0.0f);
  EXPECT_EQ(back.at(back.numel() - 1), 0.0f);
}

TEST(CudaTensorTest, ZerosFillAndBf16) {
  GANTRY_CUDA_OR_SKIP();
  // Recycled blocks must still come back zeroed from Zeros.
  for (int round = 0; round < 3; ++round) {
    Tensor dirty = Tensor::Uninitialized(Shape{1000}, DType::kF32, Device::kCuda);
    dirty.Fill(7.0f);
  }
  const Tensor zeros = ToHost(Tensor::Zeros(Shape{1000}, DType::kF32, Device::kCuda));
  for (int64_t i = 0; i < zeros.numel(); ++i) ASSERT_EQ(zeros.at(i), 0.0f) << i;
  Tensor filled = Tensor::Zeros(Shape{5}, DType::kBF16, Device::kCuda);
  filled.Fill(1.5f);
  const Tensor host = ToHost(filled);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(host.data_bf16()[i].ToFloat(), 1.5f);
}

TEST(CudaTensorTest, TheAllocatorReusesFreedBlocks) {
  GANTRY_CUDA_OR_SKIP();
  const void* first = nullptr;
  {
    Tensor t = Tensor::Uninitialized(Shape{64, 128, 7, 7}, DType::kF32, Device::kCuda);
    first = t.data();
  }
  const Tensor again = Tensor::Uninitialized(Shape{64, 128, 7, 7}, DType::kF32, Device::kCuda);
  EXPECT_EQ(again.data(), first);
  cuda::ReleaseCachedBlocks();
}

}  // namespace
}  // namespace gantry
