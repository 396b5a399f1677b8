// The order in which an epoch visits the dataset.
//
// Every rank of a run builds the same sampler from (dataset size, seed) and so computes
// the same permutation for an epoch without any communication; the global batch for
// step s is positions [s * batch, (s + 1) * batch) of that permutation, and each rank
// takes its own rows of it.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

class EpochSampler {
 public:
  EpochSampler(int64_t dataset_size, uint64_t seed);

  // A uniformly shuffled ordering of 0..dataset_size-1 (Fisher-Yates), a pure function
  // of (dataset_size, seed, epoch): identical on every rank, process and platform, and
  // different from epoch to epoch. epoch >= 0.
  std::vector<int64_t> Permutation(int64_t epoch) const;

  int64_t dataset_size() const { return dataset_size_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t dataset_size_;
  uint64_t seed_;
};

// The number of full global batches in an epoch: floor(dataset_size / batch), batch > 0.
// The last dataset_size % batch positions of each epoch's permutation are dropped, so
// every step has the same global batch, and every sample is seen at most once per
// epoch. Because each epoch reshuffles, the dropped samples differ from epoch to epoch
// and none is left out for good.
int64_t StepsPerEpoch(int64_t dataset_size, int64_t batch);

}  // namespace gantry
