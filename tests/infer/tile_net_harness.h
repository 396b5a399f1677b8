// A deterministic per-tile function for the tiled inference tests: a small fixed conv
// net (Conv 4->8 3x3, BatchNorm in eval mode on non-trivial running statistics, Conv
// 8->3 3x3, tanh) with seeded weights; and the tiled steps it drives.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/infer/tiled_map_reduce.h"

namespace gantry::testing {

class TileNet {
 public:
  explicit TileNet(uint64_t seed);
  ~TileNet();
  // [b, 4, S, S] -> [b, 3, S, S], eval mode.
  TileFunction Function();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A seeded input field [4, height, width] in [-1, 1].
std::vector<float> TestField(int64_t height, int64_t width, uint64_t seed);

// `steps` tiled steps on `comm` starting from TestField: each step's 3 output channels
// plus the input's 4th channel (a fixed mask) are the next input. Returns the last field.
absl::StatusOr<std::vector<float>> RunTiledSteps(Communicator& comm, int64_t height, int64_t width, int64_t tile,
                                                 int64_t overlap, const char* blend, int64_t group_size,
                                                 int64_t batch, int steps);

}  // namespace gantry::testing
