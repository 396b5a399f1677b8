#include "worker/layers/conv_transpose2d.h"

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

ConvGeometry ConvTranspose2d::Geometry(const Shape& input) const {
  CHECK(input.rank() == 4 && input[1] == in_)
      << "conv_transpose2d(" << in_ << "->" << out_ << ") got " << input.ToString();
  const int64_t grow = kernel_ - 2 * padding_ + output_padding_;
  const int64_t h = (input[2] - 1) * stride_ + grow;
  const int64_t w = (input[3] - 1) * stride_ + grow;
  CHECK(input[2] > 0 && input[3] > 0 && h > 0 && w > 0)
      << "conv_transpose2d: empty output for input " << input.ToString();
  return ConvGeometry{.channels = out_,
                      .height = h,
                      .width = w,
                      .kernel = kernel_,
                      .stride = stride_,
                      .padding = padding_,
                      .out_height = input[2],
                      .out_width = input[3]};
}

Shape ConvTranspose2d::OutputShape(const Shape& input) const {
  const ConvGeometry g = Geometry(input);
  return Shape{input[0], out_, g.height, g.width};
}

std::vector<ParamSpec> ConvTranspose2d::ParamSpecs() const {
  const int64_t area = kernel_ * kernel_;
  return WeightBiasSpecs(Shape{in_, out_, kernel_, kernel_}, out_ * area, in_ * area, has_bias_, out_);
}

void ConvTranspose2d::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  p_.Bind(name(), has_bias_, params, grads);
}

float* ConvTranspose2d::Scratch(int64_t numel) {
  if (!cols_.defined() || cols_.numel() < numel) cols_ = Tensor::Zeros(Shape{numel});
  return cols_.data();
}

Tensor ConvTranspose2d::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "conv_transpose2d: parameters not bound";
  const ConvGeometry g = Geometry(x.shape());
  const int64_t n = x.dim(0), rows = g.col_rows(), pixels = g.col_cols();
  const int64_t in_size = in_ * pixels, out_pixels = g.height * g.width, out_size = out_ * out_pixels;
  Tensor y = Tensor::Zeros(Shape{n, out_, g.height, g.width});
  Backend& be = *ctx.backend;
  float* cols = Scratch(rows * pixels);
  for (int64_t i = 0; i < n; ++i) {
    // cols [rows, pixels] = W^T (W viewed [in, rows]) * x_i [in, pixels], scattered onto y_i.
    be.Gemm(true, false, rows, pixels, in_, 1.0f, p_.weight.data(), rows, x.data() + i * in_size, pixels, 0.0f,
            cols, pixels);
    be.Col2Im(g, cols, y.data() + i * out_size);
  }
  if (has_bias_) be.AddChannelBias(n, out_, out_pixels, p_.bias.data(), y.data());
  cache->saved = {x};
  return y;
}

Tensor ConvTranspose2d::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                                 bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), 1u) << "conv_transpose2d: cache is not from Forward";
  const Tensor& x = cache.saved[0];
  const ConvGeometry g = Geometry(x.shape());
  CHECK(dy.shape() == OutputShape(x.shape())) << "conv_transpose2d: dy " << dy.shape().ToString();
  const int64_t n = x.dim(0), rows = g.col_rows(), pixels = g.col_cols();
  const int64_t in_size = in_ * pixels, out_pixels = g.height * g.width, out_size = out_ * out_pixels;
  Backend& be = *ctx.backend;
  if (ctx.param_grads && has_bias_) be.ChannelSum(n, out_, out_pixels, dy.data(), p_.bias_grad.data());
  if (!ctx.param_grads && !want_input_grad) return Tensor();

  Tensor dx = want_input_grad ? Tensor::Zeros(x.shape()) : Tensor();
  float* cols = Scratch(rows * pixels);
  for (int64_t i = 0; i < n; ++i) {
    // Both gradients read the gathered patches of dy_i: dcols [rows, pixels].
    be.Im2Col(g, dy.data() + i * out_size, cols);
    if (ctx.param_grads) {
      // dW [in, rows] += x_i [in, pixels] * dcols^T
      be.Gemm(false, true, in_, rows, pixels, 1.0f, x.data() + i * in_size, pixels, cols, pixels, 1.0f,
              p_.weight_grad.data(), rows);
    }
    if (want_input_grad) {
      // dx_i [in, pixels] = W [in, rows] * dcols
      be.Gemm(false, false, in_, pixels, rows, 1.0f, p_.weight.data(), rows, cols, pixels, 0.0f,
              dx.data() + i * in_size, pixels);
    }
  }
  return dx;
}

}  // namespace gantry
