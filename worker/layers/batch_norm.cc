#include "worker/layers/batch_norm.h"

namespace gantry {

BatchNorm::BatchNorm(int64_t channels, float eps, float momentum, std::optional<FusedActivation> activation)
    : channels_(channels), eps_(eps), momentum_(momentum), activation_(activation) {
  CHECK_GT(channels, 0);
  CHECK_GT(eps, 0.0f);
  CHECK(momentum >= 0.0f && momentum <= 1.0f) << "momentum " << momentum;
  CHECK(!activation || activation->slope >= 0.0f) << "batch_norm: fused LeakyReLU slope " << activation->slope;
}

Shape BatchNorm::OutputShape(const Shape& input) const {
  ViewDims(input);
  return input;
}

BatchNorm::Dims BatchNorm::ViewDims(const Shape& shape) const {
  CHECK_GE(shape.rank(), 2) << "batch_norm input " << shape.ToString();
  CHECK_EQ(shape[1], channels_) << "batch_norm input " << shape.ToString();
  int64_t hw = 1;
  for (int i = 2; i < shape.rank(); ++i) hw *= shape[i];
  return {shape[0], channels_, hw};
}

std::vector<ParamSpec> BatchNorm::ParamSpecs() const {
  return {{"gamma", Shape{channels_}, Init::kOnes}, {"beta", Shape{channels_}, Init::kZeros}};
}

void BatchNorm::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  CHECK_EQ(params.size(), 2u);
  CHECK_EQ(grads.size(), 2u);
  gamma_ = params[0];
  beta_ = params[1];
  dgamma_ = grads[0];
  dbeta_ = grads[1];
}

std::vector<ParamSpec> BatchNorm::BufferSpecs() const {
  return {{"running_mean", Shape{channels_}, Init::kZeros}, {"running_var", Shape{channels_}, Init::kOnes}};
}

void BatchNorm::BindBuffers(std::span<const Tensor> buffers) {
  CHECK_EQ(buffers.size(), 2u);
  running_mean_ = buffers[0];
  running_var_ = buffers[1];
}

void BatchNorm::UpdateRunningStats(const Context& ctx, const Tensor& mean, const Tensor& var, int64_t count) {
  CHECK_GT(count, 1) << "batch_norm needs more than one value per channel in training";
  Backend& b = *ctx.backend;
  const float blend = 1.0f - momentum_;
  const float unbias = static_cast<float>(static_cast<double>(count) / static_cast<double>(count - 1));
  b.Scale(channels_, momentum_, running_mean_.data());
  b.Axpy(channels_, blend, mean.data(), running_mean_.data());
  b.Scale(channels_, momentum_, running_var_.data());
  b.Axpy(channels_, blend * unbias, var.data(), running_var_.data());
}

Tensor BatchNorm::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(gamma_.defined() && running_mean_.defined()) << "batch_norm: parameters or buffers not bound";
  const Dims d = ViewDims(x.shape());
  Tensor mean, var;
  int64_t global_count = 0;
  if (ctx.training) {
    mean = ctx.Zeros(Shape{channels_});
    var = ctx.Zeros(Shape{channels_});
    if (ctx.sync_bn != nullptr) {
      global_count = SyncBatchStats(ctx, d, x, mean, var);
      // A single value per channel can only follow a failed Sum (see SyncBatchStats): the
      // step is lost, so keep the running statistics rather than fold in a meaningless one.
      if (global_count > 1) UpdateRunningStats(ctx, mean, var, global_count);
    } else {
      ctx.backend->BatchNormStats(d.n, d.c, d.hw, x.data(), mean.data(), var.data());
      UpdateRunningStats(ctx, mean, var, d.n * d.hw);
    }
  } else {
    // Copies, so a later update of the running statistics cannot change this Backward.
    mean = running_mean_.Clone();
    var = running_var_.Clone();
  }
  Tensor y = ctx.Uninitialized(x.shape());
  Backend& b = *ctx.backend;
  if (activation_ && ctx.training && global_count == 0) {
    b.BatchNormActivationForward(d.n, d.c, d.hw, x.data(), mean.data(), var.data(), eps_, gamma_.data(),
                                 beta_.data(), activation_->f, activation_->slope, y.data());
  } else {
    b.BatchNormApply(d.n, d.c, d.hw, x.data(), mean.data(), var.data(), eps_, gamma_.data(), beta_.data(),
                     y.data());
    if (activation_) b.ActivationForward(activation_->f, activation_->slope, y.numel(), y.data(), y.data());
  }
  // A float holds the count exactly up to 2^24 values per channel.
  cache->saved = {x, mean, var, Tensor::FromVector(Shape{1}, {ctx.training ? 1.0f : 0.0f}),
                  Tensor::FromVector(Shape{1}, {static_cast<float>(global_count)}), y};
  return y;
}

Tensor BatchNorm::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                           bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), static_cast<size_t>(kNumSlots)) << "cache is not from batch_norm's Forward";
  CHECK(dy.shape() == cache.saved[kInput].shape())
      << "batch_norm: dy " << dy.shape().ToString() << " vs x " << cache.saved[kInput].shape().ToString();
  if (!want_input_grad && !ctx.param_grads) return Tensor();
  const Dims d = ViewDims(dy.shape());
  const bool trained = cache.saved[kTrainingFlag].at(0) != 0.0f;
  if (cache.saved[kGlobalCount].at(0) > 0.0f) {
    return BackwardSynced(ctx, d, ThroughActivation(ctx, dy, cache.saved[kOutput]), cache, want_input_grad);
  }
  if (trained) return BackwardTraining(ctx, d, dy, cache, want_input_grad);
  return BackwardEval(ctx, d, ThroughActivation(ctx, dy, cache.saved[kOutput]), cache, want_input_grad);
}

Tensor BatchNorm::ThroughActivation(const Context& ctx, const Tensor& dy, const Tensor& y) const {
  if (!activation_) return dy;
  Tensor g = ctx.Uninitialized(dy.shape());
  // LeakyReLU (slope >= 0) keeps its input's sign, so the output stands in for the input.
  ctx.backend->ActivationBackward(activation_->f, activation_->slope, dy.numel(), y.data(), y.data(), dy.data(),
                                  g.data());
  return g;
}

Tensor BatchNorm::BackwardTraining(const Context& ctx, const Dims& d, const Tensor& dy,
                                   const ActivationCache& cache, bool want_input_grad) {
  Tensor dx = want_input_grad ? ctx.Uninitialized(dy.shape()) : Tensor();
  // The kernel always accumulates dgamma/dbeta; discard them into scratch when not wanted.
  Tensor dgamma = ctx.param_grads ? dgamma_ : ctx.Zeros(Shape{channels_});
  Tensor dbeta = ctx.param_grads ? dbeta_ : ctx.Zeros(Shape{channels_});
  if (activation_) {
    ctx.backend->BatchNormActivationBackward(d.n, d.c, d.hw, cache.saved[kInput].data(), cache.saved[kOutput].data(),
                                             dy.data(), cache.saved[kMean].data(), cache.saved[kVar].data(), eps_,
                                             gamma_.data(), activation_->f, activation_->slope,
                                             want_input_grad ? dx.data() : nullptr, dgamma.data(), dbeta.data());
    return dx;
  }
  ctx.backend->BatchNormBackward(d.n, d.c, d.hw, cache.saved[kInput].data(), dy.data(),
                                 cache.saved[kMean].data(), cache.saved[kVar].data(), eps_, gamma_.data(),
                                 want_input_grad ? dx.data() : nullptr, dgamma.data(), dbeta.data());
  return dx;
}

Tensor BatchNorm::BackwardEval(const Context& ctx, const Dims& d, const Tensor& dy,
                               const ActivationCache& cache, bool want_input_grad) {
  Backend& b = *ctx.backend;
  const float* mean = cache.saved[kMean].data();
  const float* var = cache.saved[kVar].data();
  // With constant statistics the layer is a per-channel affine map, so each gradient
  // is an affine map too: dx = dy * gamma / sqrt(var + eps) is BatchNormApply on dy with
  // zero mean and beta, and xhat is BatchNormApply on x with unit gamma and zero beta.
  const Tensor zeros = ctx.Zeros(Shape{channels_});
  Tensor dx;
  if (want_input_grad) {
    dx = ctx.Uninitialized(dy.shape());
    b.BatchNormApply(d.n, d.c, d.hw, dy.data(), zeros.data(), var, eps_, gamma_.data(), zeros.data(),
                     dx.data());
  }
  if (ctx.param_grads) {
    Tensor ones = ctx.Zeros(Shape{channels_});
    ones.Fill(1.0f);
    Tensor dy_xhat = ctx.Uninitialized(dy.shape());
    b.BatchNormApply(d.n, d.c, d.hw, cache.saved[kInput].data(), mean, var, eps_, ones.data(), zeros.data(),
                     dy_xhat.data());
    b.Multiply(dy.numel(), dy_xhat.data(), dy.data(), dy_xhat.data());
    b.ChannelSum(d.n, d.c, d.hw, dy_xhat.data(), dgamma_.data());
    b.ChannelSum(d.n, d.c, d.hw, dy.data(), dbeta_.data());
  }
  return dx;
}

}  // namespace gantry
