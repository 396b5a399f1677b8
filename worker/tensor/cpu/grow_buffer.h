// Scratch buffers that CPU kernels keep per thread and reuse across calls.
#pragma once

#include <cstdint>
#include <vector>

namespace gantry {

// The first `count` floats of `buf`, grown (never shrunk) as needed: a kernel's scratch
// reaches the size of its largest problem once and then stops allocating.
inline float* GrowBuffer(std::vector<float>& buf, int64_t count) {
  if (buf.size() < static_cast<size_t>(count)) buf.resize(static_cast<size_t>(count));
  return buf.data();
}

}  // namespace gantry
