#include "worker/data/sample_rows.h"

#include <cstring>

#include "common/check.h"

namespace gantry {

void InMemoryRows::CopySample(int64_t index, float* out) const {
  CHECK(index >= 0 && index < data_.count) << "sample " << index << " of " << data_.count;
  const int64_t n = data_.sample_numel();
  std::memcpy(out, data_.pixels.data() + index * n, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace gantry
