// Comparing a fast backend with the Eigen reference: element-wise error bounds that
// scale with the magnitudes that went into each output, and the skip for builds without
// the fast backend.
#pragma once

#include <string>

#include "worker/tensor/backend.h"
#include "worker/tensor/backend_registry.h"
#include "worker/tensor/tensor.h"

namespace gantry::testing {

// Relative error allowed between a 16-bit-operand product and the fp32 one, per unit
// of sum |a_i * b_i| (the output's "magnitude": the same product over |a| and |b|).
// bf16 keeps 8 significant bits (7 stored and the implicit one), so rounding an operand
// to nearest moves it by at most u = 2^-8 of itself; a product of two rounded operands
// is then off by at most (1 + u)^2 - 1 = 2^-7 + 2^-16 of |a*b|, and a sum of such
// products by that fraction of sum |a_i * b_i|. 1e-5 more covers fp32 accumulation in
// different orders on both sides.
inline constexpr double kBf16ProductTolerance = 1.0 / 128 + 1.0 / 65536 + 1e-5;
// The same for fp16 (11 significant bits, u = 2^-11): 2^-10 + 2^-22, plus the fp32 slack.
inline constexpr double kFp16ProductTolerance = 1.0 / 1024 + 1.0 / 4194304 + 1e-5;
// Two fp32 computations of one sum in different orders (or with the same rounded
// operands): fp32 round-off only.
inline constexpr double kReorderedSumTolerance = 1e-5;
// The bound for 16-bit-operand products on the tensor cores against the reference at the
// same precision (identical rounded operands, exact products): fp32 accumulation in
// another order, and the tensor cores' accumulator alignment, which may drop a few bits
// below fp32's per addition. 1e-4 of sum |a*b| allows ~sqrt(k) * 2^-20 for the DCGAN's
// largest k (6272); not yet measured on a GPU.
inline constexpr double kTensorCoreSumTolerance = 1e-4;

// Non-product fp32 ops (element-wise, BatchNorm, losses, optimizers) may differ from
// the reference only by fp32 round-off of a few operations done in another order or
// with fused multiply-adds, and by 1-2 ulp of expf / tanhf: 1e-6 (8 ulp) of the
// magnitudes of the terms that made each output.
inline constexpr double kElementwiseTolerance = 1e-6;
// A sum accumulated in double and rounded once to fp32 (the host backends' BatchNorm
// statistics): half an ulp, 6e-8 of the magnitude; 1e-7, as the CPU test held a mean of
// 1000 to 1e-4.
inline constexpr double kDoubleSumTolerance = 1e-7;
// BatchNorm's input gradient gamma/std * (dy - mean(dy) - xhat mean(dy xhat)), in units of
// |gamma|/std (|dy| + mean|dy| + |xhat| mean|dy xhat|): the per-channel sums are rounded to
// fp32 coefficients before they are combined, so 1e-5.
inline constexpr double kBatchNormInputGradientTolerance = 1e-5;
// A mean of terms that are exact in double (L1's |pred - target|), summed in double in
// any order: 1e-12 of |mean| + 1.
inline constexpr double kExactTermsSumTolerance = 1e-12;

// Adds a gtest failure unless shapes match and |actual - expected| <= factor * magnitude
// + 1e-30 for every element, where magnitude (>= 0) is the per-element scale (for a
// product: the same product over |operands|). Names `what` and reports the worst element.
void ExpectWithinBound(const Tensor& actual, const Tensor& expected, const Tensor& magnitude, double factor,
                       const std::string& what);

// The largest |actual - expected| / magnitude over elements with magnitude > 0: how far
// apart two results are in the units the bounds above use.
double MaxRelativeGap(const Tensor& actual, const Tensor& expected, const Tensor& magnitude);

// Adds a gtest failure unless `fast` (a 16-bit-operand result) is much closer to the
// reference at the same precision than to fp32: proof that the operands were rounded,
// not just that the results agree within the loose bound.
void ExpectRoundedOperands(const Tensor& fast, const Tensor& reference16, const Tensor& fp32,
                           const Tensor& magnitude);

// Element-wise |x| into a new tensor.
Tensor Abs(const Tensor& x);

}  // namespace gantry::testing

// Starts a test that needs the oneDNN backend: binds `var` (a Backend*) or skips the
// test with a message when this build has none.
#define GANTRY_ONEDNN_OR_SKIP(var)                                                             \
  ::gantry::Backend* var = ::gantry::FindBackend("onednn");                                  \
  if (var == nullptr) {                                                                        \
    GTEST_SKIP() << "built without oneDNN (libdnnl-dev missing or -DGANTRY_ONEDNN=OFF)";      \
  }
