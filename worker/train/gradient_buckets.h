// How a network's flat gradient buffer is cut into the buckets the overlapped exchange
// all-reduces one by one (PyTorch DDP's idea): whole layers, in REVERSE layer order,
// because backward finishes the last layers first. A bucket closes before the layer
// that would take it past its cap of fp32 gradient bytes (a layer larger than the cap
// travels alone); the first (the last layers) has a smaller cap, so sending starts early. The layout is a function of the layer sizes and the caps alone
// (the same on every rank and for either wire format), and it is the unit of summation:
// an exchange over the same layout gives the same bits overlapped or not.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

struct GradientBucket {
  int64_t begin = 0;       // first gradient value of the bucket in the flat buffer
  int64_t end = 0;         // one past its last
  size_t first_layer = 0;  // its lowest layer: final once backward has passed it
  int64_t size() const { return end - begin; }
};

struct BucketCaps {
  double bucket_mb = 4;  // --bucket-mb: fp32 gradient megabytes (10^6 bytes) per bucket
  double first_mb = 1;   // the first bucket's cap (at most bucket_mb)
};

// layer_offsets: FlatParameters::layer_param_offsets() (size layers + 1, non-decreasing).
// Returns the buckets in sending order, each non-empty; together they cover the buffer.
std::vector<GradientBucket> PlanGradientBuckets(const std::vector<int64_t>& layer_offsets, const BucketCaps& caps);

}  // namespace gantry
