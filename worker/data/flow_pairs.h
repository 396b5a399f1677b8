// Training rows of the flow workload: seeded random square crops of frame pairs,
// materialised as an ImageDataset of rows {7, S, S} (the flow contract): channels 0-2
// the normalised frame t (ux, uy, vorticity), 3 the obstacle mask (0/1), 4-6 the
// normalised frame t + horizon at the same crop. Rows are plain samples to the trainer,
// so they shard across ranks exactly like MNIST images.
//
// Unrolled training (--unroll M) takes windows instead: rows {4 + 3 M, S, S}, the frames
// t + horizon, t + 2 horizon, ..., t + M horizon after the mask, each at the same crop.
// M = 1 is the pair.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/flow_case.h"
#include "worker/data/flow_split.h"
#include "worker/data/mnist_dataset.h"

namespace gantry {

inline constexpr int64_t kFlowConditionChannels = kFlowChannels + 1;               // frame + mask
inline constexpr int64_t kFlowRowChannels = kFlowConditionChannels + kFlowChannels;  // + target

// The channels of a row holding `steps` targets (a window of steps + 1 frames).
inline constexpr int64_t FlowWindowChannels(int64_t steps) { return kFlowConditionChannels + steps * kFlowChannels; }
// Whether rows of channels x height x width are next-frame rows: square, a condition and
// one or more targets (a pair or an unrolled window).
inline bool IsFlowRowShape(int64_t channels, int64_t height, int64_t width) {
  return height == width && channels >= kFlowRowChannels && (channels - kFlowConditionChannels) % kFlowChannels == 0;
}

struct FlowPairOptions {
  int64_t image_size = 0;      // S, the crop side (the model's --image-size)
  int64_t horizon = 1;
  int64_t unroll = 1;          // targets per row (--unroll): the window's frames after t
  uint64_t seed = 1;
  // Crops per frame pair; 0: ceil(NY * NX / S^2), each frame's area once on average.
  int64_t crops_per_pair = 0;
  int64_t max_rows = 0;        // keep only this many rows (--limit-images); 0: all
  // Standard deviation of Gaussian noise added to the condition's frame channels (not the
  // mask, not the target), in normalised units (--input-noise); 0: none. A model trained
  // to map a slightly wrong frame to the true next one corrects small errors instead of
  // compounding them when a rollout feeds its own predictions back.
  float input_noise = 0.0f;
};

// The rows of the pairs in `ranges`. Crop origins are drawn from Rng(seed), the rows are
// put in a seeded random order (so max_rows keeps a random subset across all cases, not
// the first case) and then materialised; the input noise, if any, comes from a stream of
// its own (so it does not change which crops are drawn). Each range's inputs t must leave
// room for the window (t + unroll x horizon a frame of the case). INVALID_ARGUMENT when S
// is not positive or is larger than a case's field (naming the case, its size and the fix).
absl::StatusOr<ImageDataset> MakeFlowPairs(const std::vector<FlowCase>& cases,
                                           const std::vector<FlowPairRange>& ranges, const FlowPairOptions& options);

}  // namespace gantry
