// Helpers of the GPU tests: the skip when no CUDA device is visible, host <-> device
// copies around the CPU comparison harness (tests/testing/backend_compare.h), and the
// element-wise bound the non-product ops are held to.
#pragma once

#include <initializer_list>
#include <string>

#include "gtest/gtest.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/tensor.h"

namespace gantry::testing {

// OK, or why no CUDA device can be used here (the skip message).
std::string NoDeviceReason();

// A device copy of a host tensor, and a host copy of a device tensor.
Tensor ToGpu(const Tensor& host);
Tensor ToHost(const Tensor& device);

// The CUDA backend (only call after GANTRY_CUDA_OR_SKIP).
Backend& Cuda();

// Element-wise: |a_i| + |b_i| + ... (same shapes; host tensors).
Tensor SumAbs(std::initializer_list<Tensor> terms);

// Non-product fp32 ops (element-wise, BatchNorm, losses, optimizers) may differ from
// the reference only by fp32 round-off of a few operations done in another order or
// with fused multiply-adds, and by 1-2 ulp of expf / tanhf: 1e-6 (8 ulp) of the
// magnitudes of the terms that made each output.
inline constexpr double kElementwiseTolerance = 1e-6;

// The bound for 16-bit-operand products on the tensor cores against the CPU at the same
// precision (identical rounded operands, exact products): fp32 accumulation in another
// order, and the tensor cores' accumulator alignment, which may drop a few bits below
// fp32's per addition. 1e-4 of sum |a*b| allows ~sqrt(k) * 2^-20 for the DCGAN's largest
// k (6272); not yet measured on a GPU.
inline constexpr double kTensorCoreSumTolerance = 1e-4;

}  // namespace gantry::testing

// Starts a GPU test: skips it, saying why, when no CUDA device is visible.
#define GANTRY_CUDA_OR_SKIP()                                                      \
  do {                                                                             \
    const std::string gantry_no_device_ = ::gantry::testing::NoDeviceReason();     \
    if (!gantry_no_device_.empty()) {                                              \
      GTEST_SKIP() << "no CUDA device visible: " << gantry_no_device_;             \
    }                                                                              \
  } while (0)
