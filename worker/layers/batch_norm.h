// Batch normalisation per channel: [N, C] -> [N, C] (1d) or [N, C, H, W] -> [N, C, H, W] (2d).
#pragma once

#include <optional>

#include "worker/layers/fused_activation.h"
#include "worker/layers/layer.h"

namespace gantry {

// Training mode normalises with the batch statistics and folds them into the running
// statistics (Keras convention: running = momentum * running + (1 - momentum) * batch,
// with the unbiased batch variance as PyTorch uses). Eval mode normalises with the
// running statistics, which then are constants for Backward.
//
// Synchronised (ctx.training with ctx.sync_bn set): the batch is the global one whose rows
// are spread over the data-parallel replicas. Forward normalises with the global mean and
// biased variance (two Sum calls of C+1 and C floats) and folds them, with the global
// unbiased variance, into running statistics that come out identical on every replica.
// Backward gives dx of the global batch statistics (one Sum of 2C floats, made only when
// the input gradient is wanted) and accumulates only this replica's rows' share of the
// gamma/beta gradients, for the caller to sum over replicas with the other gradients.
// With a fused activation the layer computes f(BatchNorm(x)); in training with per-rank
// statistics (the DCGAN generator's case) normalisation and activation are one pass each
// way (Backend::BatchNormActivationForward/Backward), otherwise they are composed.
//
// Every Sum is a collective: all replicas must make the same sequence of synchronised
// Forward and Backward calls (same layers, order and want_input_grad). A Backward follows
// its Forward's mode, so after a synchronised Forward its ctx must carry sync_bn too.
// A Sum that fails (leaving this replica's own values) makes the step meaningless but
// never aborts it or yields NaN; running statistics are then left alone if the values
// are too few to update them.
class BatchNorm : public Layer {
 public:
  explicit BatchNorm(int64_t channels, float eps = 1e-3f, float momentum = 0.99f,
                     std::optional<FusedActivation> activation = std::nullopt);

  std::string name() const override { return "batch_norm"; }
  Shape OutputShape(const Shape& input) const override;

  std::vector<ParamSpec> ParamSpecs() const override;  // gamma, beta
  void BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) override;
  std::vector<ParamSpec> BufferSpecs() const override;  // running_mean, running_var
  void BindBuffers(std::span<const Tensor> buffers) override;

  Tensor Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) override;
  Tensor Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                  bool want_input_grad) override;

  int64_t channels() const { return channels_; }
  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }

 private:
  // Layout of the ActivationCache: the input, the statistics it was normalised with,
  // whether those were batch statistics (so Backward follows Forward's mode, not its own
  // ctx), the global row count times hw when they were synchronised (else 0), and the
  // output (read by a fused activation's backward).
  enum CacheSlot { kInput = 0, kMean = 1, kVar = 2, kTrainingFlag = 3, kGlobalCount = 4, kOutput = 5, kNumSlots = 6 };
  struct Dims {
    int64_t n, c, hw;  // x viewed as [n, c, hw]
  };
  Dims ViewDims(const Shape& shape) const;
  void UpdateRunningStats(const Context& ctx, const Tensor& mean, const Tensor& var, int64_t count);
  // batch_norm_sync.cc. Writes the mean and biased variance per channel of the global batch
  // (all replicas' x) into mean/var; returns the global number of values per channel (>= 1).
  int64_t SyncBatchStats(const Context& ctx, const Dims& d, const Tensor& x, const Tensor& mean,
                         const Tensor& var);
  Tensor BackwardSynced(const Context& ctx, const Dims& d, const Tensor& dy, const ActivationCache& cache,
                        bool want_input_grad);
  Tensor BackwardTraining(const Context& ctx, const Dims& d, const Tensor& dy, const ActivationCache& cache,
                          bool want_input_grad);
  Tensor BackwardEval(const Context& ctx, const Dims& d, const Tensor& dy, const ActivationCache& cache,
                      bool want_input_grad);

  // dL/d(normalised) from dL/dy through the fused activation (dy itself without one).
  Tensor ThroughActivation(const Context& ctx, const Tensor& dy, const Tensor& y) const;

  int64_t channels_;
  float eps_;
  float momentum_;
  std::optional<FusedActivation> activation_;
  Tensor gamma_, beta_, dgamma_, dbeta_;
  Tensor running_mean_, running_var_;
};

}  // namespace gantry
