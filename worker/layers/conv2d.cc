#include "worker/layers/conv2d.h"

#include <algorithm>

namespace gantry {
namespace {

// Samples per chunk are chosen to make the chunk's GEMM at most about this many columns
// wide. One 7x7 sample gives N = 49, too narrow for Eigen's kernels, so 7 of them go
// together; a 14x14 sample (N = 196) runs alone. Wider chunks let the column and
// channel-major buffers fall out of L2, and the scatter/copy passes around the GEMM then
// slow down more than the GEMM speeds up (measured on the DCGAN layers, batch 64:
// chunks of 4-16 7x7 samples beat both 1 and 64; 14x14 samples gain nothing).
constexpr int64_t kTargetGemmColumns = 384;

// The chunk of m samples at `nchw` ([m, channels, pixels]) as [channels, m * pixels]:
// `nchw` itself for one sample, else rearranged into `buf`.
const float* ChannelMajor(Backend& be, int64_t m, int64_t channels, int64_t pixels, const float* nchw,
                          float* buf) {
  if (m == 1) return nchw;
  be.SwapLeadingDims(m, channels, pixels, nchw, buf);
  return buf;
}

// The first `numel` floats of `buf`, grown (never shrunk) as needed.
float* Reserve(Tensor& buf, int64_t numel) {
  if (!buf.defined() || buf.numel() < numel) buf = Tensor::Zeros(Shape{numel});
  return buf.data();
}

// Im2Col of m images (image_size floats apart) into side-by-side blocks of one
// [rows, m * pixels] column matrix.
void LowerChunk(Backend& be, ConvGeometry g, int64_t m, const float* images, int64_t image_size,
                float* cols) {
  const int64_t pixels = g.col_cols();
  g.cols_stride = m * pixels;
  for (int64_t j = 0; j < m; ++j) be.Im2Col(g, images + j * image_size, cols + j * pixels);
}

// The adjoint of LowerChunk: images[j] += col2im(block j of cols).
void ScatterChunk(Backend& be, ConvGeometry g, int64_t m, const float* cols, float* images,
                  int64_t image_size) {
  const int64_t pixels = g.col_cols();
  g.cols_stride = m * pixels;
  for (int64_t j = 0; j < m; ++j) be.Col2Im(g, cols + j * pixels, images + j * image_size);
}

}  // namespace

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

void Conv2d::set_max_column_floats(int64_t floats) {
  CHECK_GT(floats, 0);
  max_column_floats_ = floats;
}

int64_t Conv2d::ChunkSamples(const ConvGeometry& g, int64_t batch) const {
  const int64_t wanted = kTargetGemmColumns / g.col_cols();
  const int64_t fit = max_column_floats_ / (g.col_rows() * g.col_cols());
  return std::clamp<int64_t>(std::min(wanted, fit), 1, std::max<int64_t>(batch, 1));
}

Tensor Conv2d::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  CHECK(p_.weight.defined()) << "conv2d: parameters not bound";
  const ConvGeometry g = Geometry(x.shape());
  const int64_t n = x.dim(0), rows = g.col_rows(), pixels = g.col_cols();
  const int64_t in_size = in_ * g.height * g.width, out_size = out_ * pixels;
  Tensor y = Tensor::Zeros(Shape{n, out_, g.out_height, g.out_width});
  Backend& be = *ctx.backend;
  const int64_t chunk = ChunkSamples(g, n);
  float* cols = Reserve(cols_, rows * pixels * chunk);
  float* y_cm = chunk > 1 ? Reserve(channel_major_, out_ * pixels * chunk) : nullptr;
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    const int64_t m = std::min(chunk, n - i0), wide = m * pixels;
    LowerChunk(be, g, m, x.data() + i0 * in_size, in_size, cols);
    // [out, m*pixels] = W [out, rows] * cols [rows, m*pixels], then back to NCHW (one
    // sample's product already is).
    float* y_chunk = y.data() + i0 * out_size;
    float* product = m == 1 ? y_chunk : y_cm;
    be.Gemm(false, false, out_, wide, rows, 1.0f, p_.weight.data(), rows, cols, wide, 0.0f, product, wide);
    if (m > 1) be.SwapLeadingDims(out_, m, pixels, y_cm, y_chunk);
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
  const int64_t chunk = ChunkSamples(g, n);
  float* cols = Reserve(cols_, rows * pixels * chunk);
  float* dy_cm = chunk > 1 ? Reserve(channel_major_, out_ * pixels * chunk) : nullptr;
  for (int64_t i0 = 0; i0 < n; i0 += chunk) {
    const int64_t m = std::min(chunk, n - i0), wide = m * pixels;
    const float* dy_chunk = ChannelMajor(be, m, out_, pixels, dy.data() + i0 * out_size, dy_cm);
    if (ctx.param_grads) {
      // dW [out, rows] += dy_chunk [out, m*pixels] * cols^T: one GEMM sums over the chunk.
      LowerChunk(be, g, m, x.data() + i0 * in_size, in_size, cols);
      be.Gemm(false, true, out_, rows, wide, 1.0f, dy_chunk, wide, cols, wide, 1.0f, p_.weight_grad.data(),
              rows);
    }
    if (want_input_grad) {
      // dcols [rows, m*pixels] = W^T dy_chunk, scattered back onto each (zeroed) input image.
      be.Gemm(true, false, rows, wide, out_, 1.0f, p_.weight.data(), rows, dy_chunk, wide, 0.0f, cols, wide);
      ScatterChunk(be, g, m, cols, dx.data() + i0 * in_size, in_size);
    }
  }
  return dx;
}

}  // namespace gantry
