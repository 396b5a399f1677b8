// The kernel seam. Layers, losses and optimizers do all their arithmetic through a
// Backend, so faster CPU kernels or CUDA kernels replace an implementation without
// touching a layer. Pointers address memory of the backend's device; arrays are dense
// row-major; images are NCHW. Functions documented "accumulates" add into their output
// (gradients of one flat buffer are summed across calls); all others overwrite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "worker/tensor/conv_problem.h"
#include "worker/tensor/device.h"
#include "common/math_precision.h"

namespace gantry {

enum class Activation { kLeakyRelu, kRelu, kTanh, kSigmoid };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // The memory every pointer handed to this backend addresses.
  virtual Device device() const { return Device::kCpu; }
  // Returns once every op queued so far has finished. The CPU backends finish each op
  // before returning; a GPU backend queues them, so timings and host reads wait here.
  virtual void Synchronize() {}
  // How products (GEMM, convolutions) with operands at `precision` run on this backend,
  // and why where it is not the obvious way, for the run's log and run.json.
  virtual std::string ProductPath(MathPrecision precision) const = 0;

  // --- dense algebra -------------------------------------------------------------
  // C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C. op(X) is X or X^T; lda/ldb/ldc
  // are row strides of the stored matrices. beta == 0 ignores C's old contents (NaN too).
  // `precision` is the operand format of A and B (see MathPrecision); C is fp32.
  virtual void Gemm(MathPrecision precision, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                    float* c, int64_t ldc) = 0;
  // The fp32 GEMM.
  void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    Gemm(MathPrecision::kFp32, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }

  // --- convolutions (a whole batch; shapes, layouts and the transposed-convolution
  // correspondence are in worker/tensor/conv_problem.h). Operands are rounded to
  // p.precision; results are fp32.
  // y = conv(x, w).
  virtual void ConvForward(const ConvProblem& p, const float* x, const float* w, float* y) = 0;
  // dx = the input gradient given dy (the adjoint of ConvForward in x).
  virtual void ConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx) = 0;
  // dw += the weight gradient given x and dy (accumulates).
  virtual void ConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw) = 0;
  // A convolution layer's backward when it wants both gradients: dw += the weight
  // gradient, then dx = the input gradient, from one dy. The same results as
  // ConvBackwardWeights then ConvBackwardData (which this default runs); a backend may
  // share work on the operand both read (the oneDNN one moves dy to its kernels' layout once).
  virtual void ConvBackward(const ConvProblem& p, const float* x, const float* dy, const float* w, float* dx,
                            float* dw) {
    ConvBackwardWeights(p, x, dy, dw);
    ConvBackwardData(p, dy, w, dx);
  }
  // A transposed convolution layer's backward (the adjoint of `p`, conv_problem.h) when it
  // wants both gradients, from its output gradient g and its input x: dw +=
  // ConvBackwardWeights(p, g, x), then dx = ConvForward(p, g, w). Both read g as the
  // convolution's input, which a backend may move to its kernels' layout once.
  virtual void ConvTransposeBackward(const ConvProblem& p, const float* g, const float* x, const float* w,
                                     float* dx, float* dw) {
    ConvBackwardWeights(p, g, x, dw);
    ConvForward(p, g, w, dx);
  }

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

  // --- fusions (the element-wise work XLA fuses around the DCGAN's products) --------
  // f is applied to a layer's output, and its derivative is taken from that output y:
  // LeakyReLU (slope >= 0) and ReLU keep the sign of their input, Tanh and Sigmoid
  // have f' as a function of y.
  // y = f(BatchNormApply(x)) in one pass.
  virtual void BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                          const float* var, float eps, const float* gamma, const float* beta,
                                          Activation f, float slope, float* y) = 0;
  // BatchNormBackward of y = f(BatchNormApply(x)) given dL/dy (batch statistics).
  virtual void BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y,
                                           const float* dy, const float* mean, const float* var, float eps,
                                           const float* gamma, Activation f, float slope, float* dx,
                                           float* dgamma, float* dbeta) = 0;
  // y[i, ch, :] = f(y[i, ch, :] + bias[ch]) in place (bias + activation in one pass).
  virtual void AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, Activation f,
                                        float slope, float* y) = 0;

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

  // --- 16-bit copies and loss scaling (flat buffers) ---------------------------------
  // to[i] = the bf16 bits of from[i], as bf16::FromFloat rounds (nearest even, denormals
  // kept, NaN made quiet): the bf16 copy a layer keeps of an input for its backward.
  virtual void NarrowToBf16(int64_t count, const float* from, uint16_t* to) = 0;
  // to[i] = the float whose bf16 bits are from[i] (exact).
  virtual void WidenFromBf16(int64_t count, const uint16_t* from, float* to) = 0;
  // wire[i] = WireBf16(grads[i]) (worker/tensor/bf16_wire.h: as NarrowToBf16 but
  // denormals become zeros), the input of a bf16 all-reduce.
  virtual void ToWireBf16(int64_t count, const float* grads, uint16_t* wire) = 0;
  // The loss scaler's pass (worker/tensor/cpu/gradient_unscale.h): grads[i] *= inv_scale,
  // or grads[i] = float(wire[i]) * inv_scale; returns whether every result is finite.
  // The answer is a host value, so these wait for the work queued before them.
  virtual bool UnscaleAndCheckFinite(int64_t count, float inv_scale, float* grads) = 0;
  virtual bool UnscaleFromBf16AndCheckFinite(int64_t count, const uint16_t* wire, float inv_scale,
                                             float* grads) = 0;
};

// The portable reference backend: Eigen for GEMM, plain loops elsewhere. Always
// available; every faster backend is checked against it.
Backend& CpuBackend();

}  // namespace gantry
