// Standard normal noise rows, the DCGAN generator's input.
#pragma once

#include <cstdint>

#include "worker/tensor/random.h"
#include "worker/tensor/tensor.h"

namespace gantry {

// Noise rows [rows, dim] in host memory drawn from `rng`, one standard normal per call,
// row-major: the first `dim` draws are row 0.
Tensor NormalNoise(Rng& rng, int64_t rows, int64_t dim);

}  // namespace gantry
