#include "worker/layers/conv2d.h"

namespace gantry {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding,
               bool bias)
    : in_(in_channels),
      out_(out_channels),
      kernel_(kernel),
      stride_(stride),
      padding_(padding),
      has_bias_(bias) {
  CHECK_GT(in_channels, 0);
  CHECK_GT(out_channels, 0);
  CHECK_GT(kernel, 0);
  CHECK_GT(stride, 0);
  CHECK_GE(padding, 0);
}

ConvGeometry Conv2d::Geometry(const Shape& input) const {
  CHECK(input.rank() == 4 && input[1] == in_)
      << "conv2d(" << in_ << "->" << out_ << ") got " << input.ToString();
  const int64_t h = input[2] + 2 * padding_ - kernel_;
  const int64_t w = input[3] + 2 * padding_ - kernel_;
  CHECK(h >= 0 && w >= 0) << "conv2d: kernel " << kernel_ << " larger than padded input " << input.ToString();
  return ConvGeometry{.channels = in_,
                      .height = input[2],
                      .width = input[3],
                      .kernel = kernel_,
                      .stride = stride_,
                      .padding = padding_,
                      .out_height = h / stride_ + 1,
                      .out_width = w / stride_ + 1};
}

Shape Conv2d::OutputShape(const Shape& input) const {
  const ConvGeometry g = Geometry(input);
  return Shape{input[0], out_, g.out_height, g.out_width};
}

std::vector<ParamSpec> Conv2d::ParamSpecs() const {
  const int64_t area = kernel_ * kernel_;
  return WeightBiasSpecs(Shape{out_, in_, kernel_, kernel_}, in_ * area, out_ * area, has_bias_, out_);
}

void Conv2d::BindParams(std::span<const Tensor> params, std::span<const Tensor> grads) {
  p_.Bind(name(), has_bias_, params, grads);
}

float* Conv2d::Scratch(int64_t numel) {
  if (!cols_.defined() || cols_.numel() < numel) cols_ = Tensor::Zeros(Shape{numel});
  return cols_.data();
}

Tensor Conv2d::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "conv2d: parameters not bound";
  const ConvGeometry g = Geometry(x.shape());
  const int64_t n = x.dim(0), rows = g.col_rows(), pixels = g.col_cols();
  const int64_t in_size = in_ * g.height * g.width, out_size = out_ * pixels;
  Tensor y = Tensor::Zeros(Shape{n, out_, g.out_height, g.out_width});
  Backend& be = *ctx.backend;
  float* cols = Scratch(rows * pixels);
  for (int64_t i = 0; i < n; ++i) {
    // y_i [out, pixels] = W [out, rows] * cols [rows, pixels]
    be.Im2Col(g, x.data() + i * in_size, cols);
    be.Gemm(false, false, out_, pixels, rows, 1.0f, p_.weight.data(), rows, cols, pixels, 0.0f,
            y.data() + i * out_size, pixels);
  }
  if (has_bias_) be.AddChannelBias(n, out_, pixels, p_.bias.data(), y.data());
  cache->saved = {x};
  return y;
}

Tensor Conv2d::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                        bool want_input_grad) {
  CHECK_EQ(cache.saved.size(), 1u) << "conv2d: cache is not from Forward";
  const Tensor& x = cache.saved[0];
  const ConvGeometry g = Geometry(x.shape());
  CHECK(dy.shape() == OutputShape(x.shape())) << "conv2d: dy " << dy.shape().ToString();
  const int64_t n = x.dim(0), rows = g.col_rows(), pixels = g.col_cols();
  const int64_t in_size = in_ * g.height * g.width, out_size = out_ * pixels;
  Backend& be = *ctx.backend;
  if (ctx.param_grads && has_bias_) be.ChannelSum(n, out_, pixels, dy.data(), p_.bias_grad.data());
  if (!ctx.param_grads && !want_input_grad) return Tensor();

  Tensor dx = want_input_grad ? Tensor::Zeros(x.shape()) : Tensor();
  float* cols = Scratch(rows * pixels);
  for (int64_t i = 0; i < n; ++i) {
    const float* dy_i = dy.data() + i * out_size;
    if (ctx.param_grads) {
      // dW [out, rows] += dy_i [out, pixels] * cols^T
      be.Im2Col(g, x.data() + i * in_size, cols);
      be.Gemm(false, true, out_, rows, pixels, 1.0f, dy_i, pixels, cols, pixels, 1.0f, p_.weight_grad.data(),
              rows);
    }
    if (want_input_grad) {
      // dcols [rows, pixels] = W^T dy_i, scattered back onto the (zeroed) input image.
      be.Gemm(true, false, rows, pixels, out_, 1.0f, p_.weight.data(), rows, dy_i, pixels, 0.0f, cols, pixels);
      be.Col2Im(g, cols, dx.data() + i * in_size);
    }
  }
  return dx;
}

}  // namespace gantry
