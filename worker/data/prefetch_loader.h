// Assembles one epoch's batches on a background thread, so the next batch is ready
// while the current one trains.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/batch_shares.h"  // RowRange: one rank's rows [begin, end) of every global batch
#include "common/clock.h"
#include "worker/data/batch_sampler.h"
#include "worker/data/mnist_dataset.h"
#include "worker/data/sample_rows.h"
#include "worker/tensor/tensor.h"

namespace gantry {

struct PrefetchOptions {
  std::optional<RowRange> rows;         // unset: the whole global batch
  int64_t first_step = 0;               // resumes an epoch part way through (from a checkpoint)
  const Clock* clock = &Clock::Real();  // times wait_seconds()
};

// Yields the batches of one epoch in order: step s is positions [s * batch, (s + 1) *
// batch) of sampler.Permutation(epoch), of which this loader takes rows [begin, end),
// as a Tensor [end - begin, channels, height, width] of fp32 with its own storage. The
// incomplete tail of the permutation is dropped (see StepsPerEpoch).
//
// One background thread, started by the constructor, assembles batches and keeps up to
// kDepth of them ready. `rows` (or `dataset`) must outlive the loader. Next() and wait_seconds() are
// for one consumer thread. The destructor stops the thread and joins it, also part way
// through an epoch.
class PrefetchLoader {
 public:
  static constexpr size_t kDepth = 2;

  PrefetchLoader(const SampleRows& rows, const EpochSampler& sampler, int64_t batch_size, int64_t epoch,
                 PrefetchOptions options = {});
  PrefetchLoader(const ImageDataset& dataset, const EpochSampler& sampler, int64_t batch_size, int64_t epoch,
                 PrefetchOptions options = {});
  // Rows [row_begin, row_end) of each global batch, from the epoch's first step.
  PrefetchLoader(const ImageDataset& dataset, const EpochSampler& sampler, int64_t batch_size, int64_t epoch,
                 int64_t row_begin, int64_t row_end)
      : PrefetchLoader(dataset, sampler, batch_size, epoch,
                       PrefetchOptions{.rows = RowRange{row_begin, row_end}}) {}
  ~PrefetchLoader();
  PrefetchLoader(const PrefetchLoader&) = delete;
  PrefetchLoader& operator=(const PrefetchLoader&) = delete;

  // The next batch, blocking until it is ready; nullopt once the epoch is exhausted.
  std::optional<Tensor> Next();

  // Total seconds Next() has spent blocked: the data-wait part of step time.
  double wait_seconds() const;

  // The number of batches this loader yields: StepsPerEpoch - first_step.
  int64_t steps() const { return end_step_ - first_step_; }

 private:
  // `rows` when given, else `owned` (an ImageDataset's adapter).
  PrefetchLoader(std::unique_ptr<SampleRows> owned, const SampleRows* rows, const EpochSampler& sampler,
                 int64_t batch_size, int64_t epoch, PrefetchOptions options);
  void Produce();
  Tensor Assemble(const std::vector<int64_t>& order, int64_t step) const;

  std::unique_ptr<SampleRows> owned_rows_;  // the ImageDataset constructor's
  const SampleRows& source_;
  const EpochSampler sampler_;
  const int64_t batch_size_;
  const int64_t epoch_;
  const RowRange rows_;
  const int64_t first_step_;
  const int64_t end_step_;
  const Clock& clock_;

  // std::mutex rather than absl::Mutex: Debian's Abseil is not built for
  // ThreadSanitizer, which then cannot see absl::Mutex's ordering and reports races.
  mutable std::mutex mu_;
  std::condition_variable ready_or_done_;  // signalled by the producer
  std::condition_variable room_or_stop_;   // signalled by Next() and the destructor
  std::deque<Tensor> ready_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;      // the producer has queued its last batch
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // the destructor asks the producer to quit
  int64_t wait_nanos_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread producer_;  // declared last: it starts once every member above exists
};

}  // namespace gantry
