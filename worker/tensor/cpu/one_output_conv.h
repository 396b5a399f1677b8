// Convolutions with ONE output channel, computed directly (PatchGAN's logit layer:
// 512 -> 1, 4x4, stride 1), where oneDNN's blocked kernels (which block channels by
// vector width) ran at 8-10 GFLOP/s and a GEMM over the weights is a matrix-vector
// product (onednn_conv_route.cc has the figures). Here every pass is a sum of 2-D
// correlations of single planes, vectorised along the image rows:
//   forward           y[n]    = sum over c of corr(x[n, c], w[0, c])
//   backward-data     dx[n,c] = full convolution of dy[n] with w[0, c]
//   backward-weights  dw[0,c] += sum over n of corr(x[n, c], dy[n])
// Each plane is first copied into a zero-padded one (dy dilated by the stride for
// backward-data), so the inner loops have no bounds checks. fp32 arithmetic on operands
// already rounded to the problem's precision (operand_rounding.h), as the lowered route.
#pragma once

#include "worker/tensor/conv_problem.h"

namespace gantry {

// Whether these kernels take `p`: one output channel and padding below the kernel size
// (so every output window touches the image).
bool OneOutputConvApplies(const ConvProblem& p);

// The three passes of Backend (y = conv(x, w); dx = the input gradient; dw += the weight
// gradient) for a problem OneOutputConvApplies to. Scratch is per thread.
void OneOutputConvForward(const ConvProblem& p, const float* x, const float* w, float* y);
void OneOutputConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx);
void OneOutputConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw);

}  // namespace gantry
