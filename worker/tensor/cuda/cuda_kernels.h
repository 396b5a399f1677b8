// Launchers of the CUDA backend's kernels, one .cu per kind of op. Plain C++17 with
// CUDA types only, because the .cu files are compiled by nvcc as C++17 and cannot see
// the project's C++20 headers; CudaBackend (cuda_backend.cc) maps the Backend contract
// onto these. Every launcher enqueues on `stream` and returns without waiting, except
// the ones that return a host value (they synchronise the stream). Pointers are device
// pointers, arrays dense row-major, images NCHW; semantics are those of the Backend
// method of the same name (worker/tensor/backend.h), computed in the same order of
// operations as the CPU reference where that matters (see each .cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gantry::cuda {

// Backend's Activation as an int (kLeakyRelu, kRelu, kTanh, kSigmoid = 0..3).
enum ActivationCode : int { kLeakyRelu = 0, kRelu = 1, kTanh = 2, kSigmoid = 3 };

// --- precision.cu: operand rounding (round to nearest even, as common/bf16.h, fp16.h)
// dst[r, c] (dense, row stride cols) = src[r * ld + c] rounded to bf16 / fp16.
void ToBf16(int64_t rows, int64_t cols, const float* src, int64_t ld, __nv_bfloat16* dst, cudaStream_t stream);
void ToFp16(int64_t rows, int64_t cols, const float* src, int64_t ld, __half* dst, cudaStream_t stream);
// to[i] = the float of bf16 bits from[i] (exact).
void WidenFromBf16(int64_t count, const uint16_t* from, float* to, cudaStream_t stream);
// wire[i] = WireBf16(grads[i]) (worker/tensor/bf16_wire.h: nearest even, denormals to
// signed zero, NaN made quiet), bit for bit the CPU's, so mixed backends agree.
void ToWireBf16(int64_t count, const float* grads, uint16_t* wire, cudaStream_t stream);
// C[r, c] (row stride ldc) *= beta, or = 0 when beta == 0 (NaN included): a GEMM with k == 0.
void ScaleMatrix(int64_t rows, int64_t cols, float beta, float* c, int64_t ldc, cudaStream_t stream);

// --- conv_lowering.cu: im2col over a chunk of samples, in the operand type T (float,
// __nv_bfloat16 or __half). The image side is [m, channels, height, width]; the column
// side of sample j is [channels * k * k, out_h * out_w] at cols + j * col_rows * col_cols
// (per-sample blocks, for strided-batched GEMMs) when `wide` is false, or the sample's
// block of columns of one [col_rows, m * col_cols] matrix when `wide` is true.
struct Lowering {
  int64_t channels, height, width, kernel, stride, padding, out_height, out_width;
};
template <typename T>
void Im2Col(const Lowering& g, int64_t m, const T* images, bool wide, T* cols, cudaStream_t stream);
// images[j] = col2im(per-sample block j of cols) (overwrites; the adjoint of Im2Col,
// each image element gathering its taps, so no atomics and a fixed summation order).
void Col2Im(const Lowering& g, int64_t m, const float* cols, float* images, cudaStream_t stream);
// dst[b, a, p] = src[a, b, p] for src [a, b, p] (NCHW <-> channel-major [C, N, HW]).
template <typename T>
void SwapLeadingDims(int64_t a, int64_t b, int64_t p, const T* src, T* dst, cudaStream_t stream);

// --- bias.cu
void AddChannelBias(int64_t n, int64_t c, int64_t hw, const float* bias, float* y, cudaStream_t stream);
void AddChannelBiasActivation(int64_t n, int64_t c, int64_t hw, const float* bias, int f, float slope, float* y,
                              cudaStream_t stream);
// out[ch] += sum of dy over channel ch, summed in double.
void ChannelSum(int64_t n, int64_t c, int64_t hw, const float* dy, float* out, cudaStream_t stream);
void ChannelAffine(int64_t n, int64_t c, int64_t hw, const float* x, const float* scale, const float* shift, float* y,
                   cudaStream_t stream);

// --- activation.cu
void ActivationForward(int f, float slope, int64_t count, const float* x, float* y, cudaStream_t stream);
void ActivationBackward(int f, float slope, int64_t count, const float* x, const float* y, const float* dy,
                        float* dx, cudaStream_t stream);

// --- elementwise.cu
void Multiply(int64_t count, const float* a, const float* b, float* out, cudaStream_t stream);
void Axpy(int64_t count, float alpha, const float* x, float* y, cudaStream_t stream);
void Scale(int64_t count, float alpha, float* x, cudaStream_t stream);

// --- dropout.cu: the same (seed, i) -> uniform draw as worker/tensor/random.h.
void DropoutForward(int64_t count, float rate, uint64_t seed, const float* x, float* mask, float* y,
                    cudaStream_t stream);

// --- batchnorm.cu (statistics and gradient sums in double, as the reference)
void BatchNormStats(int64_t n, int64_t c, int64_t hw, const float* x, float* mean, float* var, cudaStream_t stream);
// y = f((x - mean) * (gamma / sqrt(var + eps)) + beta); f < 0 means no activation.
void BatchNormActivationForward(int64_t n, int64_t c, int64_t hw, const float* x, const float* mean,
                                const float* var, float eps, const float* gamma, const float* beta, int f,
                                float slope, float* y, cudaStream_t stream);
// Backward of y = f(BN(x)) (f < 0: no activation; y unused then): dgamma, dbeta
// accumulate, dx (may be null) is overwritten. `scratch` holds 3 * c floats.
void BatchNormActivationBackward(int64_t n, int64_t c, int64_t hw, const float* x, const float* y, const float* dy,
                                 const float* mean, const float* var, float eps, const float* gamma, int f,
                                 float slope, float* dx, float* dgamma, float* dbeta, float* scratch,
                                 cudaStream_t stream);

// --- loss.cu: return the mean loss (summed in double) after the stream finished.
double BceWithLogits(int64_t count, const float* logits, float target, float* dlogits, cudaStream_t stream);
double L1Loss(int64_t count, const float* pred, const float* target, float* dpred, cudaStream_t stream);

// --- optimizer.cu (inv_c1 = 1/(1-b1^t), inv_sqrt_c2 = 1/sqrt(1-b2^t), from the host)
void AdamStep(int64_t count, float lr, float beta1, float beta2, float eps, float inv_c1, float inv_sqrt_c2,
              const float* grad, float* param, float* m, float* v, cudaStream_t stream);
void SgdStep(int64_t count, float lr, float momentum, const float* grad, float* param, float* momentum_buf,
             cudaStream_t stream);

// --- unscale.cu: the loss scaler's pass (worker/tensor/cpu/gradient_unscale.h) on device
// buffers; returns whether every result is finite (synchronises the stream).
bool UnscaleAndCheckFinite(float* grads, int64_t count, float inv_scale, cudaStream_t stream);
bool UnscaleFromBf16AndCheckFinite(const uint16_t* wire, float* grads, int64_t count, float inv_scale,
                                   cudaStream_t stream);

}  // namespace gantry::cuda
