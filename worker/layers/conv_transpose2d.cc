#include "worker/layers/conv_transpose2d.h"

#include "worker/layers/saved_input.h"

namespace gantry {

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                 int64_t padding, int64_t output_padding, bool bias)
    : in_(in_channels),
      out_(out_channels),
      kernel_(kernel),
      stride_(stride),
      padding_(padding),
      output_padding_(output_padding),
      has_bias_(bias) {
  CHECK_GT(in_channels, 0);
  CHECK_GT(out_channels, 0);
  CHECK_GT(kernel, 0);
  CHECK_GT(stride, 0);
  CHECK_GE(padding, 0);
  CHECK_GE(output_padding, 0);
  // As in PyTorch: a larger output padding would add rows no input pixel reaches, and
  // the matching Conv2d would no longer map the output back to the input's size.
  CHECK_LT(output_padding, stride);
}

ConvProblem ConvTranspose2d::Problem(const Shape& input, MathPrecision precision) const {
  CHECK(input.rank() == 4 && input[1] == in_)
      << "conv_transpose2d(" << in_ << "->" << out_ << ") got " << input.ToString();
  const int64_t grow = kernel_ - 2 * padding_ + output_padding_;
  const int64_t h = (input[2] - 1) * stride_ + grow;
  const int64_t w = (input[3] - 1) * stride_ + grow;
  CHECK(input[2] > 0 && input[3] > 0 && h > 0 && w > 0)
      << "conv_transpose2d: empty output for input " << input.ToString();
  return ConvProblem{.batch = input[0],
                     .in_channels = out_,
                     .out_channels = in_,
                     .in_height = h,
                     .in_width = w,
                     .out_height = input[2],
                     .out_width = input[3],
                     .kernel = kernel_,
                     .stride = stride_,
                     .padding = padding_,
                     .precision = precision};
}

Shape ConvTranspose2d::OutputShape(const Shape& input) const {
  const ConvProblem p = Problem(input, MathPrecision::kFp32);
  return Shape{input[0], out_, p.in_height, p.in_width};
}

std::vector<ParamSpec> ConvTranspose2d::ParamSpecs() const {
  const int64_t area = kernel_ * kernel_;
  return WeightBiasSpecs(Shape{in_, out_, kernel_, kernel_}, out_ * area, in_ * area, has_bias_, out_);
}

void ConvTranspose2d::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  p_.Bind(name(), has_bias_, params, grads);
}

Tensor ConvTranspose2d::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "conv_transpose2d: parameters not bound";
  const ConvProblem p = Problem(x.shape(), ctx.precision);
  Tensor y = ctx.Uninitialized(OutputShape(x.shape()));
  ctx.backend->ConvBackwardData(p, x.data(), p_.weight.data(), y.data());
  if (has_bias_) ctx.backend->AddChannelBias(p.batch, out_, p.in_height * p.in_width, p_.bias.data(), y.data());
  cache->saved = {KeepInputForBackward(ctx, x)};
  return y;
}

Tensor ConvTranspose2d::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                                 bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), 1u) << "conv_transpose2d: cache is not from Forward";
  const Tensor x = SavedInputAsFloat(ctx, cache.saved[0]);
  const ConvProblem p = Problem(x.shape(), ctx.precision);
  CHECK(dy.shape() == OutputShape(x.shape())) << "conv_transpose2d: dy " << dy.shape().ToString();
  Backend& be = *ctx.backend;
  if (ctx.param_grads && has_bias_) {
    be.ChannelSum(p.batch, out_, p.in_height * p.in_width, dy.data(), p_.bias_grad.data());
  }
  // The adjoint conv's x is this layer's dy, and its dy this layer's x.
  if (!want_input_grad) {
    if (ctx.param_grads) be.ConvBackwardWeights(p, dy.data(), x.data(), p_.weight_grad.data());
    return Tensor();
  }
  Tensor dx = ctx.Uninitialized(x.shape());
  if (ctx.param_grads) {
    be.ConvTransposeBackward(p, dy.data(), x.data(), p_.weight.data(), dx.data(), p_.weight_grad.data());
  } else {
    be.ConvForward(p, dy.data(), p_.weight.data(), dx.data());
  }
  return dx;
}

}  // namespace gantry
