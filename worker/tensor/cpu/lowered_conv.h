// Convolutions lowered to GEMMs (im2col), a chunk of samples at a time: the samples'
// column matrices side by side in one [in*k*k, samples*out_pixels] matrix, so one GEMM
// per chunk has a wide N even where a sample's output is only 7x7 (or 2x2), and reads the
// weights once per chunk. Activations and gradients move between NCHW and the
// channel-major [C, samples, pixels] the GEMM reads and writes with SwapLeadingDims (one
// sample's block already is channel-major).
//
// The GEMM is the caller's: the reference backend passes Eigen's, the oneDNN backend its
// matmul (the "lowered" route, for weight-bound problems: the weights stay in the
// caller's OIHW layout, where oneDNN's convolution kernels reorder them to a blocked
// layout and back on every call). Operands must already be rounded to the problem's
// precision (operand_rounding.h): these functions run fp32 arithmetic.
#pragma once

#include <cstdint>
#include <functional>

#include "worker/tensor/conv_problem.h"

namespace gantry {

// C[m,n] = alpha * op(A) * op(B) + beta * C, as Backend::Gemm at fp32.
using LoweringGemm = std::function<void(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                        const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                                        float* c, int64_t ldc)>;

// Floats of one sample's column matrix: (in_channels * k * k) x (out_height * out_width).
int64_t ColumnFloatsPerSample(const ConvProblem& p);

// The three ops of Backend (y = conv(x, w); dx = the input gradient; dw += the weight
// gradient) on chunks of `chunk` samples (1..p.batch; the last chunk may be smaller). A
// kernel that covers the whole unpadded input is one GEMM over the batch (no im2col).
// Scratch is per thread, so ranks running as threads may call them concurrently.
void LoweredConvForward(const ConvProblem& p, int64_t chunk, const float* x, const float* w, float* y,
                        const LoweringGemm& gemm);
void LoweredConvBackwardData(const ConvProblem& p, int64_t chunk, const float* dy, const float* w, float* dx,
                             const LoweringGemm& gemm);
void LoweredConvBackwardWeights(const ConvProblem& p, int64_t chunk, const float* x, const float* dy, float* dw,
                                const LoweringGemm& gemm);

}  // namespace gantry
