#include "worker/data/batch_sampler.h"

#include <numeric>
#include <utility>

#include "common/check.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {
// Salts the epoch before mixing so that (seed a, epoch b) and (seed b, epoch a) do not
// share a stream.
constexpr uint64_t kEpochSalt = 0x6a09e667f3bcc909ull;
}  // namespace

EpochSampler::EpochSampler(int64_t dataset_size, uint64_t seed) : dataset_size_(dataset_size), seed_(seed) {
  CHECK_GE(dataset_size, 0);
}

std::vector<int64_t> EpochSampler::Permutation(int64_t epoch) const {
  CHECK_GE(epoch, 0);
  std::vector<int64_t> order(static_cast<size_t>(dataset_size_));
  std::iota(order.begin(), order.end(), int64_t{0});
  Rng rng(Mix64(seed_) ^ Mix64(static_cast<uint64_t>(epoch) ^ kEpochSalt));
  for (int64_t i = dataset_size_ - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

int64_t StepsPerEpoch(int64_t dataset_size, int64_t batch) {
  CHECK_GT(batch, 0);
  CHECK_GE(dataset_size, 0);
  return dataset_size / batch;
}

}  // namespace gantry
