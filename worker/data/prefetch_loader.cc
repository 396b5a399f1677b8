#include "worker/data/prefetch_loader.h"

#include <utility>

#include "common/check.h"

namespace gantry {

PrefetchLoader::PrefetchLoader(const ImageDataset& dataset, const EpochSampler& sampler, int64_t batch_size,
                               int64_t epoch, PrefetchOptions options)
    : PrefetchLoader(std::make_unique<InMemoryRows>(dataset), nullptr, sampler, batch_size, epoch, options) {
  CHECK_EQ(static_cast<int64_t>(dataset.pixels.size()), dataset.count * dataset.sample_numel());
}

PrefetchLoader::PrefetchLoader(const SampleRows& rows, const EpochSampler& sampler, int64_t batch_size,
                               int64_t epoch, PrefetchOptions options)
    : PrefetchLoader(nullptr, &rows, sampler, batch_size, epoch, options) {}

PrefetchLoader::PrefetchLoader(std::unique_ptr<SampleRows> owned, const SampleRows* rows, const EpochSampler& sampler,
                               int64_t batch_size, int64_t epoch, PrefetchOptions options)
    : owned_rows_(std::move(owned)),
      source_(rows != nullptr ? *rows : *owned_rows_),
      sampler_(sampler),
      batch_size_(batch_size),
      epoch_(epoch),
      rows_(options.rows.value_or(RowRange{0, batch_size})),
      first_step_(options.first_step),
      end_step_(StepsPerEpoch(sampler.dataset_size(), batch_size)),
      clock_(*options.clock) {
  CHECK_EQ(sampler.dataset_size(), source_.count()) << "the sampler was built for another dataset";
  CHECK(0 <= rows_.begin && rows_.begin <= rows_.end && rows_.end <= batch_size)
      << "rows [" << rows_.begin << "," << rows_.end << ") of a batch of " << batch_size;
  CHECK(0 <= first_step_ && first_step_ <= end_step_) << "first_step " << first_step_ << " of " << end_step_;
  producer_ = std::thread([this] { Produce(); });
}

PrefetchLoader::~PrefetchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  room_or_stop_.notify_all();
  // The producer only ever blocks waiting for room or stopping_, which now holds, and
  // assembling a batch is bounded work, so the join cannot hang.
  producer_.join();
}

std::optional<Tensor> PrefetchLoader::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (ready_.empty() && !done_) {
    // The queue is empty, so the producer has room and never waits on us: it either
    // queues a batch or marks the epoch done, and this wait always ends.
    const int64_t start = clock_.NowNanos();
    ready_or_done_.wait(lock, [this] { return !ready_.empty() || done_; });
    wait_nanos_ += clock_.NowNanos() - start;
  }
  if (ready_.empty()) return std::nullopt;
  Tensor batch = std::move(ready_.front());
  ready_.pop_front();
  lock.unlock();
  room_or_stop_.notify_one();
  return batch;
}

double PrefetchLoader::wait_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<double>(wait_nanos_) * 1e-9;
}

void PrefetchLoader::Produce() {
  const std::vector<int64_t> order = sampler_.Permutation(epoch_);
  for (int64_t step = first_step_; step < end_step_; ++step) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      room_or_stop_.wait(lock, [this] { return ready_.size() < kDepth || stopping_; });
      if (stopping_) return;
    }
    // Assembled outside the lock so Next() can hand out queued batches meanwhile.
    Tensor batch = Assemble(order, step);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_.push_back(std::move(batch));
    }
    ready_or_done_.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  ready_or_done_.notify_one();
}

Tensor PrefetchLoader::Assemble(const std::vector<int64_t>& order, int64_t step) const {
  const Shape shape = source_.sample_shape();
  const int64_t n = shape.numel();
  Tensor batch = Tensor::Uninitialized(Shape{rows_.end - rows_.begin, shape[0], shape[1], shape[2]});
  float* out = batch.data();
  for (int64_t r = rows_.begin; r < rows_.end; ++r) {
    source_.CopySample(order[static_cast<size_t>(step * batch_size_ + r)], out + (r - rows_.begin) * n);
  }
  return batch;
}

}  // namespace gantry
