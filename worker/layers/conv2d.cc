#include "worker/layers/conv2d.h"

#include "worker/layers/saved_input.h"

namespace gantry {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
               bool bias, std::optional<FusedActivation> activation)
    : in_(in_channels),
      out_(out_channels),
      kernel_(kernel),
      stride_(stride),
      padding_(padding),
      has_bias_(bias),
      activation_(activation) {
  CHECK(!activation || activation->slope >= 0.0f) << "conv2d: fused LeakyReLU slope " << activation->slope;
  CHECK_GT(in_channels, 0);
  CHECK_GT(out_channels, 0);
  CHECK_GT(kernel, 0);
  CHECK_GT(stride, 0);
  CHECK_GE(padding, 0);
}

ConvProblem Conv2d::Problem(const Shape& input, MathPrecision precision) const {
  CHECK(input.rank() == 4 && input[1] == in_)
      << "conv2d(" << in_ << "->" << out_ << ") got " << input.ToString();
  CHECK(input[2] + 2 * padding_ >= kernel_ && input[3] + 2 * padding_ >= kernel_)
      << "conv2d: kernel " << kernel_ << " larger than padded input " << input.ToString();
  return ConvProblem{.batch = input[0],
                     .in_channels = in_,
                     .out_channels = out_,
                     .in_height = input[2],
                     .in_width = input[3],
                     .out_height = ConvOutSize(input[2], kernel_, stride_, padding_),
                     .out_width = ConvOutSize(input[3], kernel_, stride_, padding_),
                     .kernel = kernel_,
                     .stride = stride_,
                     .padding = padding_,
                     .precision = precision};
}

Shape Conv2d::OutputShape(const Shape& input) const {
  const ConvProblem p = Problem(input, MathPrecision::kFp32);
  return Shape{input[0], out_, p.out_height, p.out_width};
}

std::vector<ParamSpec> Conv2d::ParamSpecs() const {
  const int64_t area = kernel_ * kernel_;
  return WeightBiasSpecs(Shape{out_, in_, kernel_, kernel_}, in_ * area, out_ * area, has_bias_, out_);
}

void Conv2d::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  p_.Bind(name(), has_bias_, params, grads);
}

Tensor Conv2d::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "conv2d: parameters not bound";
  const ConvProblem p = Problem(x.shape(), ctx.precision);
  Tensor y = ctx.Uninitialized(OutputShape(x.shape()));
  Backend& be = *ctx.backend;
  be.ConvForward(p, x.data(), p_.weight.data(), y.data());
  const int64_t pixels = p.out_height * p.out_width;
  if (has_bias_ && activation_) {
    be.AddChannelBiasActivation(p.batch, out_, pixels, p_.bias.data(), activation_->f, activation_->slope, y.data());
  } else if (has_bias_) {
    be.AddChannelBias(p.batch, out_, pixels, p_.bias.data(), y.data());
  } else if (activation_) {
    be.ActivationForward(activation_->f, activation_->slope, y.numel(), y.data(), y.data());
  }
  cache->saved = {KeepInputForBackward(ctx, x)};
  if (activation_) cache->saved.push_back(y);
  return y;
}

Tensor Conv2d::Backward(const Context& ctx, const Tensor& dy_out, const ActivationCache& cache,
                        bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), activation_ ? 2u : 1u) << "conv2d: cache is not from Forward";
  const Tensor x = SavedInputAsFloat(ctx, cache.saved[0]);
  const ConvProblem p = Problem(x.shape(), ctx.precision);
  CHECK(dy_out.shape() == OutputShape(x.shape())) << "conv2d: dy " << dy_out.shape().ToString();
  Backend& be = *ctx.backend;
  if (!ctx.param_grads && !want_input_grad) return Tensor();
  // Through the fused activation first; LeakyReLU (slope >= 0) keeps its input's sign, so
  // the output stands in for the input.
  Tensor dy = dy_out;
  if (activation_) {
    const Tensor& y = cache.saved[1];
    dy = ctx.Uninitialized(y.shape());
    be.ActivationBackward(activation_->f, activation_->slope, y.numel(), y.data(), y.data(), dy_out.data(),
                          dy.data());
  }
  if (ctx.param_grads && has_bias_) {
    be.ChannelSum(p.batch, out_, p.out_height * p.out_width, dy.data(), p_.bias_grad.data());
  }
  if (!want_input_grad) {
    be.ConvBackwardWeights(p, x.data(), dy.data(), p_.weight_grad.data());
    return Tensor();
  }
  Tensor dx = ctx.Uninitialized(x.shape());
  if (ctx.param_grads) {
    be.ConvBackward(p, x.data(), dy.data(), p_.weight.data(), dx.data(), p_.weight_grad.data());
  } else {
    be.ConvBackwardData(p, dy.data(), p_.weight.data(), dx.data());
  }
  return dx;
}

}  // namespace gantry
