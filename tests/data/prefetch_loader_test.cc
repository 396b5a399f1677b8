#include "worker/data/prefetch_loader.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

namespace gantry {
namespace {

// count samples of 1x2x3 whose every pixel encodes (sample, element) as sample * 10 + j.
ImageDataset Numbered(int64_t count, int64_t height = 2, int64_t width = 3) {
  ImageDataset d;
  d.count = count;
  d.height = height;
  d.width = width;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < height * width; ++j) d.pixels.push_back(static_cast<float>(i * 10 + j % 10));
  }
  d.labels.assign(static_cast<size_t>(count), 0);
  return d;
}

// Checks that `batch` holds samples order[first..first + rows) of `data`, in order.
void ExpectRows(const ImageDataset& data, const Tensor& batch, const std::vector<int64_t>& order,
                int64_t first) {
  const int64_t n = data.sample_numel();
  for (int64_t r = 0; r < batch.dim(0); ++r) {
    const int64_t sample = order[first + r];
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(batch.at(r * n + j), data.pixels[sample * n + j]) << "row " << r << " element " << j;
    }
  }
}

TEST(PrefetchLoader, YieldsTheEpochInSamplerOrder) {
  const ImageDataset data = Numbered(50);
  const EpochSampler sampler(50, 11);
  const std::vector<int64_t> order = sampler.Permutation(3);
  PrefetchLoader loader(data, sampler, 8, 3);
  EXPECT_EQ(loader.steps(), 6);
  for (int64_t step = 0; step < 6; ++step) {
    std::optional<Tensor> batch = loader.Next();
    ASSERT_TRUE(batch.has_value()) << "step " << step;
    EXPECT_EQ(batch->shape(), (Shape{8, 1, 2, 3}));
    ExpectRows(data, *batch, order, step * 8);
  }
  EXPECT_FALSE(loader.Next().has_value());
  EXPECT_FALSE(loader.Next().has_value());
}

TEST(PrefetchLoader, TakesOneShardOfEachGlobalBatch) {
  const ImageDataset data = Numbered(50);
  const EpochSampler sampler(50, 11);
  const std::vector<int64_t> order = sampler.Permutation(0);
  PrefetchLoader loader(data, sampler, 8, 0, 3, 6);
  for (int64_t step = 0; step < 6; ++step) {
    std::optional<Tensor> batch = loader.Next();
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->shape(), (Shape{3, 1, 2, 3}));
    ExpectRows(data, *batch, order, step * 8 + 3);
  }
  EXPECT_FALSE(loader.Next().has_value());
}

TEST(PrefetchLoader, ResumesPartWayThroughAnEpoch) {
  const ImageDataset data = Numbered(50);
  const EpochSampler sampler(50, 11);
  const std::vector<int64_t> order = sampler.Permutation(2);
  PrefetchLoader loader(data, sampler, 8, 2, PrefetchOptions{.rows = RowRange{0, 2}, .first_step = 4});
  EXPECT_EQ(loader.steps(), 2);
  for (int64_t step = 4; step < 6; ++step) {
    std::optional<Tensor> batch = loader.Next();
    ASSERT_TRUE(batch.has_value());
    ExpectRows(data, *batch, order, step * 8);
  }
  EXPECT_FALSE(loader.Next().has_value());
}

TEST(PrefetchLoader, EmptyEpochWhenTheBatchExceedsTheDataset) {
  const ImageDataset data = Numbered(5);
  PrefetchLoader loader(data, EpochSampler(5, 1), 8, 0);
  EXPECT_FALSE(loader.Next().has_value());
}

// A clock that moves 1 ms every time it is read: each blocked Next() reads it twice,
// so the data-wait total is a whole number of milliseconds, one per blocked call.
class TickingClock : public Clock {
 public:
  int64_t NowNanos() const override { return ticks_.fetch_add(1'000'000) + 1'000'000; }

 private:
  mutable std::atomic<int64_t> ticks_{0};
};

TEST(PrefetchLoader, WaitTimeComesFromTheInjectedClock) {
  const ImageDataset data = Numbered(2000, 28, 28);
  const TickingClock clock;
  PrefetchOptions options;
  options.clock = &clock;
  PrefetchLoader loader(data, EpochSampler(2000, 1), 100, 0, options);
  int calls = 0;
  while (loader.Next().has_value()) ++calls;
  EXPECT_EQ(calls, 20);
  const double ms = loader.wait_seconds() * 1e3;
  EXPECT_NEAR(ms, std::round(ms), 1e-6);
  EXPECT_LE(ms, 21.0);
}

// Runs `body` on its own thread and fails if it has not finished within a deadline,
// so a deadlocked destructor fails the test instead of hanging the suite.
void FinishesWithin(std::chrono::seconds limit, std::function<void()> body) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([body = std::move(body), done] {
    body();
    done->set_value();
  }).detach();
  ASSERT_EQ(finished.wait_for(limit), std::future_status::ready) << "the loader did not shut down";
}

TEST(PrefetchLoader, DestructionMidEpochDoesNotHang) {
  // Shared, so the data outlives a (failed) detached body that is still stuck.
  auto data = std::make_shared<const ImageDataset>(Numbered(20000, 28, 28));
  const EpochSampler sampler(20000, 5);
  FinishesWithin(std::chrono::seconds(30), [data, sampler] { PrefetchLoader loader(*data, sampler, 16, 0); });
  FinishesWithin(std::chrono::seconds(30), [data, sampler] {
    PrefetchLoader loader(*data, sampler, 16, 0);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(loader.Next().has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the queue fill up
  });
  FinishesWithin(std::chrono::seconds(30), [data, sampler] {
    PrefetchLoader loader(*data, sampler, 4000, 1);
    while (loader.Next().has_value()) {
    }
  });
}

}  // namespace
}  // namespace gantry
