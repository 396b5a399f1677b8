// Shared by the thread and mpirun equivalence tests: trains the DCGAN for a few steps
// on fixed synthetic global batches, either as one rank holding the whole batch or as
// one of several ranks holding its share, and returns the final flat parameters.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace gantry::testing {

struct EquivalenceSetup {
  int64_t global_batch = 8;
  int steps = 3;
  std::vector<int64_t> shares;  // per rank when there are shares.size() ranks; else even shares
  bool sync_bn = true;
  std::string optimizer = "sgd";
};

struct TrainedParams {
  std::vector<float> g;  // G's flat parameters after the steps
  std::vector<float> d;
  std::vector<float> g_buffers;  // G's BatchNorm running statistics
};

// Runs on `comm`'s rank. Rank != 0 starts from deliberately different weights, so the
// result also shows that rank 0's weights were broadcast.
absl::StatusOr<TrainedParams> TrainFewSteps(Communicator& comm, const EquivalenceSetup& setup);

// Largest |a - b| / (atol_scale * max|b| + |b|)-style error: max over i of
// |a_i - b_i| / (1e-3 * max_j |b_j| + |b_i|).
double MaxScaledDifference(const std::vector<float>& a, const std::vector<float>& b);
// max over i of |a_i - b_i|.
double MaxAbsDifference(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace gantry::testing
