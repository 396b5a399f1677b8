// Shared by the thread and mpirun equivalence tests: trains the DCGAN for a few steps
// on fixed synthetic global batches, either as one rank holding the whole batch or as
// one of several ranks holding its share, and returns the final flat parameters.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "runspec/augment_policy.h"
#include "runspec/mixed_precision.h"
#include "worker/comm/communicator.h"
#include "worker/train/gradient_buckets.h"

namespace gantry::testing {

struct EquivalenceSetup {
  int64_t global_batch = 8;
  int steps = 3;
  std::vector<int64_t> shares;  // per rank when there are shares.size() ranks; else even shares
  bool sync_bn = true;
  std::string optimizer = "sgd";
  MixedPrecision mixed;         // loss scaling, wire format, forced overflow
  AugmentPolicy augment;        // --augment: D's inputs transformed per global row
  std::optional<BucketCaps> overlap;  // set: the exchange overlaps backward in these buckets
  std::function<bool(int step)> overlapped_at;  // with overlap: which steps use it (null: all), as --overlap auto's trial
};

// What one network looked like after one step.
struct NetworkAfterStep {
  bool stepped = true;
  float scale = 1;             // its scaler's scale for the next step
  int64_t skipped = 0;         // its scaler's count of skipped steps so far
  int64_t optimizer_steps = 0;
  uint64_t fingerprint = 0;    // FNV-1a of its parameters and optimizer state
};

struct TrainedParams {
  std::vector<float> g;  // G's flat parameters after the steps
  std::vector<float> d;
  std::vector<float> g_buffers;  // G's BatchNorm running statistics
  std::vector<NetworkAfterStep> g_steps, d_steps;  // one per step
  std::vector<float> initial_g;  // parameters after the broadcast, before step 1
  std::vector<float> initial_d;
};

// Runs on `comm`'s rank. Rank != 0 starts from deliberately different weights, so the
// result also shows that rank 0's weights were broadcast.
absl::StatusOr<TrainedParams> TrainFewSteps(Communicator& comm, const EquivalenceSetup& setup);

// TrainFewSteps on `ranks` thread ranks of one LocalGroup; element r is rank r's result.
absl::StatusOr<std::vector<TrainedParams>> TrainOnThreadRanks(int ranks, const EquivalenceSetup& setup);

// FNV-1a over raw bytes.
uint64_t Fingerprint(const void* data, size_t bytes, uint64_t h = 1469598103934665603ull);

// Largest |a - b| / (atol_scale * max|b| + |b|)-style error: max over i of
// |a_i - b_i| / (1e-3 * max_j |b_j| + |b_i|).
double MaxScaledDifference(const std::vector<float>& a, const std::vector<float>& b);
// max_i |a_i - b_i| / max_i |b_i - start_i|: a difference in units of the largest
// change the steps made from `start` to `b`.
double DifferenceInUpdates(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& start);
// max over i of |a_i - b_i|.
double MaxAbsDifference(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace gantry::testing
