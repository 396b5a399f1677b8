// The layout move between sample-major NCHW and the channel-major [C, N, HW] that a
// batched convolution GEMM reads and writes.
#pragma once

#include <cstdint>

namespace gantry {

// y[j][i][:] = x[i][j][:] for x viewed as [a, b, inner] (so y is [b, a, inner]).
// y must not overlap x.
void SwapLeadingDims(int64_t a, int64_t b, int64_t inner, const float* x, float* y);

}  // namespace gantry
