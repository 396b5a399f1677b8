// The kernel seam. Layers, losses and optimizers do all their arithmetic through a
// Backend, so faster CPU kernels or CUDA kernels replace an implementation without
// touching a layer. Pointers address memory of the backend's device; arrays are dense
// row-major; images are NCHW. Functions documented "accumulates" add into their output
// (gradients of one flat buffer are summed across calls); all others overwrite.
#pragma once

#include <cstdint>
#include <string_view>

namespace gantry {

// Geometry of a square-kernel convolution, seen from the image side.
// The image is [channels, height, width]; the column matrix is
// [channels * kernel * kernel, out_height * out_width] where (out_y, out_x) indexes
// kernel positions: image pixel (out_y*stride - padding + ky, out_x*stride - padding + kx).
// For Conv2d the image is the input; for ConvTranspose2d it is the output (so output
// padding just makes the image larger than the column side covers).
// cols_stride lets the column matrix be one sample's block of columns inside a wider
// matrix (a batch lowered side by side for one GEMM): row r of the block starts at
// cols + r * cols_stride. Columns outside the block are never read or written.
struct ConvGeometry {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
  int64_t kernel = 0;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t out_height = 0;
  int64_t out_width = 0;
  int64_t cols_stride = 0;  // row stride of the column matrix; 0: dense (col_cols())

  int64_t col_rows() const { return channels * kernel * kernel; }
  int64_t col_cols() const { return out_height * out_width; }
  int64_t col_stride() const { return cols_stride != 0 ? cols_stride : col_cols(); }
};

enum class Activation { kLeakyRelu, kRelu, kTanh, kSigmoid };

// The number format of the operands of the matrix products (GEMM, convolutions) of a
// training run. kFp32 is plain fp32. kBf16 and kFp16 are mixed precision: the operands
// (weights, activations, incoming gradients) are rounded to the 16-bit format before the
// product, products accumulate in fp32 and results are fp32. Element-wise work,
// BatchNorm, losses and optimizers stay fp32; master weights are always fp32.
enum class MathPrecision { kFp32, kBf16, kFp16 };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // --- dense algebra -------------------------------------------------------------
  // C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C. op(X) is X or X^T; lda/ldb/ldc
  // are row strides of the stored matrices. beta == 0 ignores C's old contents (NaN too).
  virtual void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                    const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                    float* c, int64_t ldc) = 0;

  // --- convolution lowering (one image) ---------------------------------------------
  // cols = im2col(image); positions outside the image read as 0.
  virtual void Im2Col(const ConvGeometry& g, const float* image, float* cols) = 0;
  // image += col2im(cols) (accumulates): the adjoint of Im2Col.
  virtual void Col2Im(const ConvGeometry& g, const float* cols, float* image) = 0;

  // --- layout -------------------------------------------------------------------------
  // y[j][i][:] = x[i][j][:] for x viewed as [a, b, inner] (so y is [b, a, inner]); moves
  // a batch between sample-major NCHW and the channel-major [C, N, HW] that a batched
  // convolution GEMM reads and writes. y must not overlap x.
  virtual void SwapLeadingDims(int64_t a, int64_t b, int64_t inner, const float* x, float* y) = 0;

  // --- per-channel bias (x viewed as [n, c, hw]) ----------------------------------
  // y[i, ch, :] += bias[ch]
  virtual void AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y) = 0;
  // out[ch] += sum over i, hw of dy[i, ch, :]  (accumulates; a bias gradient)
  virtual void ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out) = 0;
  // y[i, ch, :] = x[i, ch, :] * scale[ch] + shift[ch]; y may alias x.
  virtual void ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale,
                             const float* shift, float* y) = 0;

  // --- element-wise ----------------------------------------------------------------
  // y = f(x); slope is LeakyReLU's negative slope and ignored by the others.
  virtual void ActivationForward(Activation f, float slope, int64_t count, const float* x, float* y) = 0;
  // dx = dy * f'(.) where f' is taken from x (LeakyReLU, ReLU) or from y = f(x)
  // (Tanh, Sigmoid); the unused one may be null. dx may alias dy.
  virtual void ActivationBackward(Activation f, float slope, int64_t count, const float* x,
                                  const float* y, const float* dy, float* dx) = 0;
  // out = a * b (out may alias either).
  virtual void Multiply(int64_t count, const float* a, const float* b, float* out) = 0;
  // y += alpha * x
  virtual void Axpy(int64_t count, float alpha, const float* x, float* y) = 0;
  // x *= alpha
  virtual void Scale(int64_t count, float alpha, float* x) = 0;
  // dst = src (dense copy of count elements)
  virtual void Copy(int64_t count, const float* src, float* dst) = 0;

  // --- dropout ---------------------------------------------------------------------
  // mask[i] = 0 with probability `rate`, else 1/(1-rate); y = x * mask. The draw for
  // element i is a pure function of (seed, i), so it is reproducible on any backend.
  virtual void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask,
                              float* y) = 0;

  // --- batch normalisation (x viewed as [n, c, hw], statistics per channel) -------
  // mean[ch], var[ch] = the batch mean and biased variance of channel ch.
  virtual void BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean,
                              float* var) = 0;
  // y = (x - mean) / sqrt(var + eps) * gamma + beta
  virtual void BatchNormApply(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                              const float* var, float eps, const float* gamma, const float* beta,
                              float* y) = 0;
  // Gradients of BatchNormApply where mean/var are the batch statistics of x
  // (training mode, so gradients flow through them). dgamma, dbeta accumulate; dx is
  // overwritten and may be null when the input gradient is not wanted.
  virtual void BatchNormBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* dy,
                                 const float* mean, const float* var, float eps, const float* gamma,
                                 float* dx, float* dgamma, float* dbeta) = 0;

  // --- losses (mean over `count` elements) -----------------------------------------
  // Binary cross-entropy on logits against the constant label `target`, computed
  // stably (max(x,0) - x*t + log1p(exp(-|x|))). Returns the mean loss; when dlogits is
  // not null writes d(mean loss)/dlogits = (sigmoid(x) - t) / count.
  virtual double BceWithLogits(int64_t count, const float* logits, float target, float* dlogits) = 0;
  // Mean absolute error; when dpred is not null writes sign(pred - target) / count
  // (0 where they are equal).
  virtual double L1Loss(int64_t count, const float* pred, const float* target, float* dpred) = 0;

  // --- optimizers (update flat buffers in place) -------------------------------------
  // Adam with bias correction at 1-based step `step`:
  //   m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2
  //   p -= lr * (m / (1-b1^step)) / (sqrt(v / (1-b2^step)) + eps)
  virtual void AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, int64_t step,
                        const float* grad, float* param, float* m, float* v) = 0;
  // SGD with (PyTorch-style) momentum: buf = momentum*buf + g; p -= lr * buf.
  virtual void SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param,
                       float* momentum_buf) = 0;
};

// The portable reference backend: Eigen for GEMM, plain loops elsewhere. Always
// available; every faster backend is checked against it.
Backend& CpuBackend();

}  // namespace gantry
