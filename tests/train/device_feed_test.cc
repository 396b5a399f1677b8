// On the CPU the feed hands on the prefetch loader's batches as they are (the GPU path,
// which uploads one step ahead, is tested in tests/gpu/cuda_training_test.cc).
#include "worker/train/device_feed.h"

#include <cstring>

#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(DeviceFeedTest, OnTheCpuItYieldsTheLoadersBatchesThenEnds) {
  ImageDataset data;
  data.count = 50;
  data.height = data.width = 4;
  for (int64_t i = 0; i < data.count * 16; ++i) data.pixels.push_back(static_cast<float>(i % 97) / 97.0f);
  const EpochSampler sampler(data.count, 3);
  PrefetchLoader expected(data, sampler, 16, 1), fed(data, sampler, 16, 1);
  DeviceFeed feed(fed, Device::kCpu);
  int steps = 0;
  while (std::optional<Tensor> want = expected.Next()) {
    std::optional<Tensor> got = feed.Next();
    ASSERT_TRUE(got.has_value()) << "step " << steps;
    EXPECT_EQ(got->device(), Device::kCpu);
    ASSERT_TRUE(got->shape() == want->shape());
    EXPECT_EQ(std::memcmp(got->data(), want->data(), want->nbytes()), 0) << "step " << steps;
    ++steps;
  }
  EXPECT_EQ(steps, 3);
  EXPECT_FALSE(feed.Next().has_value());
}

}  // namespace
}  // namespace gantry
