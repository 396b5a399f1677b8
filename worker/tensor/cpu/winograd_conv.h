// Stride-1 4x4 convolutions by Winograd's minimal filtering F(3x3, 4x4): PatchGAN's
// stride-1 convolution (ndf*4 -> ndf*8 channels on a 31x31 map at 256 px) is a third of
// a Pix2Pix step's multiply-adds, and runs seven times a step (onednn_conv_route.cc has
// the figures). Direct or im2col kernels spend 144 multiply-adds per 3x3 output tile per
// channel pair; F(3x3, 4x4) spends 36, as 36 GEMMs (one per point of a 6x6 transformed
// tile) over whole channel matrices, so the GEMMs stay about as efficient as the direct
// kernels while doing 4x fewer multiply-adds (3.5x on a 31x31 map, whose last tiles are
// partly outside it). Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"
// (2016), give the construction.
//
// The transforms use the interpolation points 0, 1, -1, -2, 1/2 and infinity
// (scripts/winograd_matrices.py derives the matrices and measures the fp32 error of the
// candidate point sets: this one and 0, 1, -1, -1/2, 2 tie at a norm-wise error of 3.4e-7
// for 256 channels, the same as F(2x2, 4x4)'s best and 10x a direct fp32 sum's; 0, +-1,
// +-2 give 7.3e-7):
//   forward            y tile (3x3)  = A^T [ (G g G^T) . (B^T d B) ] A
//   backward-data      the forward of dy (padded by 3 - padding) with each kernel rotated
//                      180 degrees and the channel roles swapped
//   backward-weights   dw (4x4)     += A4^T [ sum over tiles (G3 dy_tile G3^T) . (B^T d B) ] A4
// where d is a 6x6 input patch, g a 4x4 kernel, dy_tile a 3x3 block of the output
// gradient; F(4x4, 3x3) shares B with F(3x3, 4x4) (same points), so both passes transform
// the input alike. Every pass works on chunks of samples: the chunk's transformed input
// [36][channels][tiles] feeds 36 GEMMs from the caller (LoweringGemm), whose products are
// transformed back.
//
// Rounding differs from a direct sum (the transforms add and scale before the products);
// tests/tensor/winograd_conv_test.cc bounds it norm-wise. fp32 only: operands rounded to
// bf16 would lose their meaning once transformed.
#pragma once

#include <cstdint>

#include "worker/tensor/conv_problem.h"
#include "worker/tensor/cpu/lowered_conv.h"

namespace gantry {

// Whether these kernels take `p`: a 4x4 kernel at stride 1 with padding at most 3 (so the
// backward-data pass is a forward correlation with padding 3 - padding >= 0).
bool WinogradConvApplies(const ConvProblem& p);

// The width of `op`'s GEMMs over the whole batch: batch x the 3x3 tiles of the plane the
// pass writes (y for forward and backward-weights, dx for backward-data). The transforms'
// cost per call does not shrink with it, so small problems lose (onednn_conv_route.cc).
int64_t WinogradColumns(const ConvProblem& p, ConvOp op);

// The share of the computed 3x3 tiles' area that lies inside the plane `op` writes (the
// rest is computed and thrown away): 1 for sides that are multiples of 3, 49/81 for a 7x7
// map, 961/1089 for 31x31. The multiply-adds saved are 4x this share.
double WinogradTileCoverage(const ConvProblem& p, ConvOp op);

// The three passes of Backend (y = conv(x, w); dx = the input gradient; dw += the weight
// gradient) for a problem WinogradConvApplies to, in fp32 arithmetic whatever p.precision
// says. Scratch is per thread, so ranks running as threads may call them concurrently.
void WinogradConvForward(const ConvProblem& p, const float* x, const float* w, float* y, const LoweringGemm& gemm);
void WinogradConvBackwardData(const ConvProblem& p, const float* dy, const float* w, float* dx,
                              const LoweringGemm& gemm);
void WinogradConvBackwardWeights(const ConvProblem& p, const float* x, const float* dy, float* dw,
                                 const LoweringGemm& gemm);

}  // namespace gantry
