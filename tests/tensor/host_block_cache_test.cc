// HostBlockCache: large freed blocks come back to the next request of their size, small
// ones never enter it, the cap holds by dropping the oldest, and a tensor built on a
// reused block is still zero-filled where Zeros promises it.
#include "worker/tensor/host_block_cache.h"

#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/tensor.h"

namespace gantry {
namespace {

constexpr size_t kLarge = HostBlockCache::kMinCachedBytes + HostBlockCache::kAlignment;

TEST(HostBlockCacheTest, AReleasedLargeBlockServesTheNextRequestOfItsSize) {
  HostBlockCache& cache = HostBlockCache::Instance();
  const size_t before = cache.cached_bytes();
  void* a = cache.Allocate(kLarge);
  ASSERT_NE(a, nullptr);
  cache.Release(a, kLarge);
  EXPECT_EQ(cache.cached_bytes(), before + kLarge);
  void* other_size = cache.Allocate(kLarge + HostBlockCache::kAlignment);
  EXPECT_NE(other_size, a);
  EXPECT_EQ(cache.cached_bytes(), before + kLarge);
  void* b = cache.Allocate(kLarge);
  EXPECT_EQ(b, a);
  EXPECT_EQ(cache.cached_bytes(), before);
  cache.Release(b, kLarge);
  cache.Release(other_size, kLarge + HostBlockCache::kAlignment);
}

TEST(HostBlockCacheTest, SmallBlocksBypassIt) {
  HostBlockCache& cache = HostBlockCache::Instance();
  const size_t before = cache.cached_bytes();
  void* small = cache.Allocate(HostBlockCache::kMinCachedBytes - HostBlockCache::kAlignment);
  ASSERT_NE(small, nullptr);
  cache.Release(small, HostBlockCache::kMinCachedBytes - HostBlockCache::kAlignment);
  EXPECT_EQ(cache.cached_bytes(), before);
}

// Blocks are never touched here, so this reserves address space, not memory.
TEST(HostBlockCacheTest, TheCapDropsTheOldestBlocks) {
  HostBlockCache& cache = HostBlockCache::Instance();
  const size_t count = HostBlockCache::kMaxCachedBytes / kLarge + 2;
  std::vector<void*> blocks;
  for (size_t i = 0; i < count; ++i) blocks.push_back(cache.Allocate(kLarge));
  for (void* b : blocks) {
    ASSERT_NE(b, nullptr);
    cache.Release(b, kLarge);
    EXPECT_LE(cache.cached_bytes(), HostBlockCache::kMaxCachedBytes);
  }
  // The newest block is still there: the next request of its size gets it back.
  void* again = cache.Allocate(kLarge);
  EXPECT_EQ(again, blocks.back());
  cache.Release(again, kLarge);
}

TEST(HostBlockCacheTest, ZerosOnAReusedBlockAreZero) {
  const int64_t floats = static_cast<int64_t>(kLarge / sizeof(float));
  {
    Tensor dirty = Tensor::Uninitialized(Shape{floats});
    dirty.Fill(3.0f);
  }
  const Tensor zeros = Tensor::Zeros(Shape{floats});
  for (int64_t i = 0; i < floats; i += 4099) ASSERT_EQ(zeros.at(i), 0.0f) << i;
  EXPECT_EQ(zeros.at(floats - 1), 0.0f);
}

}  // namespace
}  // namespace gantry
