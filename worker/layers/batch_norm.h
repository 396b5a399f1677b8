// Batch normalisation per channel: [N, C] -> [N, C] (1d) or [N, C, H, W] -> [N, C, H, W] (2d).
#pragma once

#include "worker/layers/layer.h"

namespace gantry {

// Training mode normalises with the batch statistics and folds them into the running
// statistics (Keras convention: running = momentum * running + (1 - momentum) * batch,
// with the unbiased batch variance as PyTorch uses). Eval mode normalises with the
// running statistics, which then are constants for Backward.
class BatchNorm : public Layer {
 public:
  explicit BatchNorm(int64_t channels, float eps = 1e-3f, float momentum = 0.99f);

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
  struct Dims {
    int64_t n, c, hw;  // x viewed as [n, c, hw]
  };
  Dims ViewDims(const Shape& shape) const;
  void UpdateRunningStats(const Context& ctx, const Tensor& mean, const Tensor& var, int64_t count);
  Tensor BackwardTraining(const Context& ctx, const Dims& d, const Tensor& dy, const ActivationCache& cache,
                          bool want_input_grad);
  Tensor BackwardEval(const Context& ctx, const Dims& d, const Tensor& dy, const ActivationCache& cache,
                      bool want_input_grad);

  int64_t channels_;
  float eps_;
  float momentum_;
  Tensor gamma_, beta_, dgamma_, dbeta_;
  Tensor running_mean_, running_var_;
};

}  // namespace gantry
