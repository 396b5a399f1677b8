// Helpers of the GPU tests: the skip when no CUDA device is visible, and host <-> device
// copies. (The op suite's bounds are in tests/testing/backend_compare.h.)
#pragma once

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

}  // namespace gantry::testing

// Starts a GPU test: skips it, saying why, when no CUDA device is visible.
#define GANTRY_CUDA_OR_SKIP()                                                      \
  do {                                                                             \
    const std::string gantry_no_device_ = ::gantry::testing::NoDeviceReason();     \
    if (!gantry_no_device_.empty()) {                                              \
      GTEST_SKIP() << "no CUDA device visible: " << gantry_no_device_;             \
    }                                                                              \
  } while (0)
