// One synchronous data-parallel GAN step on one rank.
//
// Each rank holds rows of the global batch (its share b of B). It computes the
// gradients of (b / B) times its mean losses, so a plain sum all-reduce of each
// network's flat gradient buffer yields the gradient of the whole batch's mean loss —
// the update single-process SGD would make, for even and uneven shares alike. Every
// rank then applies the same update, so replicas never drift.
#pragma once

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "worker/comm/communicator.h"
#include "worker/models/dcgan.h"
#include "worker/models/gan_step.h"
#include "worker/optim/optimizer.h"
#include "worker/train/replica_reducer.h"

namespace gantry {

struct DataParallelStepResult {
  double d_loss = 0;           // this rank's (unweighted) mean losses
  double g_loss = 0;
  double compute_s = 0;        // forward + backward + optimizer, this rank
  double allreduce_s = 0;      // time inside the gradient all-reduces (includes waiting for peers)
};

// Makes one rank slow on purpose (--debug-slow-rank), so straggler flagging and
// rebalancing can be demonstrated: after the gradients are computed the rank sleeps
// extra_ms plus (factor - 1) times the compute time it just spent. The sleep counts as
// compute, as a genuinely slower host's would.
struct DebugSlowdown {
  double extra_ms = 0;
  double factor = 1;
  bool active() const { return extra_ms > 0 || factor > 1; }
};

class DataParallelStep {
 public:
  // sync_bn: BatchNorm statistics are summed across ranks (else per-rank statistics).
  DataParallelStep(Dcgan& model, Optimizer& g_opt, Optimizer& d_opt, Communicator& comm, Backend& backend,
                   const CommOptions& comm_options, bool sync_bn, const Clock& clock,
                   DebugSlowdown slowdown = {});

  // real: this rank's rows [b,1,28,28]; z: the matching noise rows [b,noise_dim];
  // global_batch: B. dropout_seed must be the same on every rank.
  absl::StatusOr<DataParallelStepResult> Run(const Tensor& real, const Tensor& z, int64_t global_batch,
                                             uint64_t dropout_seed);

 private:
  absl::Status AllReduceGradients(FlatParameters& params, double* seconds);

  Dcgan& model_;
  Optimizer& g_opt_;
  Optimizer& d_opt_;
  Communicator& comm_;
  Backend& backend_;
  CommOptions comm_options_;
  CommReplicaReducer reducer_;
  bool sync_bn_;
  const Clock& clock_;
  DebugSlowdown slowdown_;
};

// Makes every rank's weights and BatchNorm buffers equal to rank 0's.
absl::Status BroadcastModel(Communicator& comm, Dcgan& model, const CommOptions& options);

}  // namespace gantry
