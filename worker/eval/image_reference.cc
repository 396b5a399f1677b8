#include "worker/eval/image_reference.h"

#include "worker/data/batch_sampler.h"

namespace gantry {
namespace {

constexpr uint64_t kImageReferenceSeed = 0x72656673;  // "refs"

}  // namespace

std::vector<int64_t> ImageReferenceOrder(int64_t count) {
  return EpochSampler(count, kImageReferenceSeed).Permutation(0);
}

}  // namespace gantry
