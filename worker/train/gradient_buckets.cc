#include "worker/train/gradient_buckets.h"

#include <algorithm>

#include "common/check.h"

namespace gantry {
namespace {

int64_t CapValues(double mb) { return std::max<int64_t>(1, static_cast<int64_t>(mb * 1e6 / sizeof(float))); }

}  // namespace

std::vector<GradientBucket> PlanGradientBuckets(const std::vector<int64_t>& layer_offsets, const BucketCaps& caps) {
  CHECK_GE(layer_offsets.size(), 1u);
  CHECK_GT(caps.bucket_mb, 0);
  std::vector<GradientBucket> buckets;
  const int64_t cap = CapValues(caps.bucket_mb);
  const int64_t first_cap = std::min(cap, CapValues(caps.first_mb));
  int64_t end = layer_offsets.back();  // the open bucket is [begin, end)
  int64_t begin = end;
  for (size_t layer = layer_offsets.size() - 1; layer-- > 0;) {
    const int64_t layer_begin = layer_offsets[layer];
    CHECK_LE(layer_begin, begin) << "layer offsets must not decrease";
    const int64_t limit = buckets.empty() ? first_cap : cap;
    // Close the open bucket before a layer that would take it past its cap.
    if (begin < end && end - layer_begin > limit) {
      buckets.push_back({begin, end, layer + 1});
      end = begin;
    }
    begin = layer_begin;
  }
  if (begin < end) buckets.push_back({begin, end, 0});
  return buckets;
}

}  // namespace gantry
