#include <cstring>

#include "common/check.h"
#include "common/vector_clones.h"
#include "worker/tensor/cpu/swap_leading_dims.h"

namespace gantry {

GANTRY_VECTOR_CLONES
void SwapLeadingDims(int64_t a, int64_t b, int64_t inner, const float* x, float* y) {
  CHECK(a >= 0 && b >= 0 && inner >= 0) << "a=" << a << " b=" << b << " inner=" << inner;
  const size_t run = static_cast<size_t>(inner) * sizeof(float);
  // Reads x in order; each [inner] run is contiguous on both sides, so a run of a few
  // dozen floats (an image plane) moves as one memcpy.
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) std::memcpy(y + (j * a + i) * inner, x + (i * b + j) * inner, run);
  }
}

}  // namespace gantry
