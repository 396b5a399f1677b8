// One synchronous data-parallel GAN step on one rank.
//
// Each rank holds rows of the global batch (its share b of B). It computes the
// gradients of (b / B) times its mean losses, so a plain sum all-reduce of each
// network's flat gradient buffer yields the gradient of the whole batch's mean loss —
// the update single-process SGD would make, for even and uneven shares alike. Every
// rank then applies the same update, so replicas never drift.
//
// Mixed precision (see mixed_precision.h): the matrix products run at
// MixedPrecision::precision. With loss scaling each network's loss weight is further
// multiplied by its own LossScaler's scale; after the all-reduce each network's gradient
// is multiplied by 1/scale and checked for inf/NaN in one pass, and a network whose
// gradient is not finite skips its optimizer step (weights and optimizer state stay as
// they were) while its scaler backs off. G and D decide independently.
//
// The skip decision needs no extra collective. Contract: the check reads the ALL-REDUCED
// buffer, whose bytes are identical on every rank (both AllReduceSum and
// AllReduceSumBf16 promise that), and multiplies by 1/scale, where every rank's scaler
// holds the same scale because it started from the same configuration and has been fed
// the same decisions. So every rank makes the same decision at every step, skips the
// same steps, and the replicas stay bit-identical. (At world size 1 the check reads the
// local gradient.)
//
// With a bf16 wire each network's fp32 gradient is rounded to bf16 (WireBf16) into a
// wire buffer, all-reduced with AllReduceSumBf16, and converted back to fp32 fused with
// the unscale and the check.
//
// Devices: the model, its optimizers' state and the wire buffer live where the backend
// computes (Backend::device()). The gradients are all-reduced by `gradient_comm` (NCCL on
// GPUs) or, when none is given, by `comm`; a transport that reduces another memory than
// the backend's (MPI for a GPU run) gets a host copy of the buffer and hands the sum back.
// `comm` also carries everything else: sync-BN's statistics, broadcasts and gathers, all
// in host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "runspec/mixed_precision.h"
#include "worker/comm/communicator.h"
#include "worker/models/gan_model.h"
#include "worker/optim/loss_scaler.h"
#include "worker/optim/optimizer.h"
#include "worker/train/overlapped_exchange.h"
#include "worker/train/replica_reducer.h"

namespace gantry {

struct DataParallelStepResult {
  double d_loss = 0;           // this rank's (unweighted) mean losses
  double g_loss = 0;
  double compute_s = 0;        // forward + backward + unscale + optimizer, this rank
  double allreduce_s = 0;      // gradient exchange: the all-reduces (including waiting for peers) and,
                               // with a bf16 wire, the conversions to and from bf16; overlapped:
                               // the time the all-reduces took on their thread
  double allreduce_exposed_s = 0;  // the part of allreduce_s the step waited for after its compute
                                   // (all of it without overlap); compute_s leaves only this out
  bool d_stepped = true;       // false: D's step was skipped (non-finite gradient)
  bool g_stepped = true;
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
  // `mixed` must be valid (ValidateLossScaleConfig); its inject_inf counts the steps of
  // this object, from 1.
  DataParallelStep(GanModel& model, Optimizer& g_opt, Optimizer& d_opt, Communicator& comm, Backend& backend,
                   const CommOptions& comm_options, bool sync_bn, const Clock& clock,
                   DebugSlowdown slowdown = {}, const MixedPrecision& mixed = {},
                   Communicator* gradient_comm = nullptr);

  // inputs: this rank's b rows of the step (GanModel::StepInputs), from row
  // inputs.row_offset of the global batch on; global_batch: B. dropout_seed must be the
  // same on every rank.
  absl::StatusOr<DataParallelStepResult> Run(const GanInputs& inputs, int64_t global_batch, uint64_t dropout_seed);

  // Overlaps the gradient exchange with backward from the next step on
  // (overlapped_exchange.h), in buckets of `caps`. Collective: every rank calls it at the
  // same point (it duplicates the gradient communicator). Nothing to do at one rank.
  // Unimplemented or FailedPrecondition, leaving the step as it was, where the
  // transport cannot run collectives from a second thread or the model's gradients live
  // on a GPU (the NCCL path exchanges after backward).
  absl::Status EnableOverlap(const BucketCaps& caps);
  bool overlapped() const { return overlap_ != nullptr; }
  // Once EnableOverlap succeeded: which exchange the next steps use (--overlap auto's trial
  // alternates; the two give the same result bit for bit). `for_good`: the choice is final,
  // so the other exchange's buffers go (the plain one's bf16 wire, or the overlapped
  // exchange with its thread and duplicate communicator; collective then, as EnableOverlap).
  void UseOverlap(bool on, bool for_good = false);

  const LossScaler& g_scaler() const { return g_scaler_; }
  const LossScaler& d_scaler() const { return d_scaler_; }
  // Steps this object has run (what --debug-inject-inf-step counts).
  int64_t steps_run() const { return steps_run_; }

  // Resumes where a checkpointed step object stood: both scalers' states and its step
  // count. Errors (a state from other loss-scale settings) leave this object unchanged.
  absl::Status Restore(const LossScalerState& g, const LossScalerState& d, int64_t steps_run);

 private:
  // All-reduces `params`' gradient in the wire format, then unscales it and checks it.
  // Returns whether the optimizer may step (always true when `scaler` checks nothing).
  absl::StatusOr<bool> ExchangeGradients(FlatParameters& params, const LossScaler& scaler, double* seconds);
  // The sum over the ranks of `buffer` (fp32, or bf16 wire bits), in place.
  absl::Status AllReduce(const Tensor& buffer);
  // The overlapped exchange's end of a step: sends what backward's hooks did not, waits,
  // then unscales and checks each network. Returns {D may step, G may step}.
  absl::StatusOr<std::pair<bool, bool>> FinishOverlappedExchange(DataParallelStepResult* out);
  // Unscales and checks one network's summed gradient: from the wire (bf16) or in place.
  // Returns whether its optimizer may step (always, when `scaler` checks nothing).
  bool UnscaleAndCheck(FlatParameters& params, const LossScaler& scaler, const uint16_t* summed_wire);
  // Whether this step poisons this rank's gradients (--debug-inject-inf-step).
  bool InjectsThisStep() const;
  // --debug-inject-inf-step: poisons this rank's local gradients at the chosen step.
  void MaybeInjectInf();

  GanModel& model_;
  Optimizer& g_opt_;
  Optimizer& d_opt_;
  Communicator& comm_;
  Communicator& gradient_comm_;
  Backend& backend_;
  CommOptions comm_options_;
  CommReplicaReducer reducer_;
  bool sync_bn_;
  const Clock& clock_;
  DebugSlowdown slowdown_;
  MixedPrecision mixed_;
  LossScaler g_scaler_;
  LossScaler d_scaler_;
  Tensor wire_;  // bf16 all-reduce buffer on the backend's device, sized for the larger network
  std::unique_ptr<OverlappedExchange> overlap_;  // null: exchange after backward
  bool overlap_in_use_ = true;                   // with overlap_: whether steps use it
  bool overlapping() const { return overlap_ != nullptr && overlap_in_use_; }
  int64_t steps_run_ = 0;
};

// Makes every rank's weights and BatchNorm buffers equal to rank 0's (over `comm`, in
// host memory: a model on a GPU is copied out and back).
absl::Status BroadcastModel(Communicator& comm, GanModel& model, const CommOptions& options);

}  // namespace gantry
