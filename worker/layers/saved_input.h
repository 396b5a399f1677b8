// The input a matrix-product layer (Linear, Conv2d, ConvTranspose2d) keeps from Forward
// for its weight gradient.
//
// Under MathPrecision::kBf16 the backward product rounds that input to bf16 anyway, so
// it is kept as bf16: half the memory of the activations saved for backward, and the
// same gradients bit for bit (rounding a bf16 value to bf16 is the identity). Under fp32
// and fp16 it is kept as it is (fp16 has no tensor storage type yet).
#pragma once

#include "worker/layers/layer.h"
#include "worker/tensor/tensor.h"

namespace gantry {

// What Forward puts in its cache for input `x`.
Tensor KeepInputForBackward(const Context& ctx, const Tensor& x);

// The fp32 tensor Backward computes with: `saved` itself, or its bf16 values widened
// into a fresh fp32 tensor.
Tensor SavedInputAsFloat(const Context& ctx, const Tensor& saved);

}  // namespace gantry
