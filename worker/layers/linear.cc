#include "worker/layers/linear.h"

#include "worker/layers/saved_input.h"

namespace gantry {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias)
    : in_(in_features), out_(out_features), has_bias_(bias) {
  CHECK_GT(in_features, 0);
  CHECK_GT(out_features, 0);
}

Shape Linear::OutputShape(const Shape& input) const {
  CHECK(input.rank() == 2 && input[1] == in_)
      << "linear(" << in_ << "->" << out_ << ") got " << input.ToString();
  return Shape{input[0], out_};
}

std::vector<ParamSpec> Linear::ParamSpecs() const {
  return WeightBiasSpecs(Shape{out_, in_}, in_, out_, has_bias_, out_);
}

void Linear::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  p_.Bind(name(), has_bias_, params, grads);
}

Tensor Linear::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "linear: parameters not bound";
  const Shape out_shape = OutputShape(x.shape());
  const int64_t n = x.dim(0);
  Tensor y = ctx.Uninitialized(out_shape);
  ctx.backend->Gemm(ctx.precision, false, true, n, out_, in_, 1.0f, x.data(), in_, p_.weight.data(), in_,
                    0.0f, y.data(), out_);
  if (has_bias_) ctx.backend->AddChannelBias(n, out_, 1, p_.bias.data(), y.data());
  cache->saved = {KeepInputForBackward(ctx, x)};
  return y;
}

Tensor Linear::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                        bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), 1u) << "linear: cache is not from Forward";
  const Tensor x = SavedInputAsFloat(ctx, cache.saved[0]);
  const int64_t n = x.dim(0);
  CHECK(dy.shape() == OutputShape(x.shape())) << "linear: dy " << dy.shape().ToString();
  Backend& be = *ctx.backend;
  if (ctx.param_grads) {
    // dW[out, in] += dy^T x;  db += column sums of dy.
    be.Gemm(ctx.precision, true, false, out_, in_, n, 1.0f, dy.data(), out_, x.data(), in_, 1.0f,
            p_.weight_grad.data(), in_);
    if (has_bias_) be.ChannelSum(n, out_, 1, dy.data(), p_.bias_grad.data());
  }
  if (!want_input_grad) return Tensor();
  Tensor dx = ctx.Uninitialized(x.shape());
  be.Gemm(ctx.precision, false, false, n, in_, out_, 1.0f, dy.data(), out_, p_.weight.data(), in_, 0.0f,
          dx.data(), in_);
  return dx;
}

}  // namespace gantry
