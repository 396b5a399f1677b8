// NumPy .npy files of floating-point arrays, so flow fields and samples can be loaded
// with a plain np.load(path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

struct NpyArray {
  std::vector<int64_t> shape;  // empty for a 0-d array (one element)
  std::vector<float> data;     // C order, product(shape) elements
};

// Writes `data` (product(shape) floats, C order) as a version 1.0 .npy file of dtype
// '<f4'. The header is padded with spaces so that magic + header length ends on a
// 64-byte boundary, with '\n' as its last byte. The file appears atomically: it is
// written to a temporary name in the same folder, fsynced and renamed over `path`, so a
// reader never sees a partial file. Fails on a negative dimension or an I/O error.
absl::Status WriteNpy(const std::string& path, const float* data, const std::vector<int64_t>& shape);
// As WriteNpy, but never replaces anything (common/file_io.h CreateFileAtomically):
// ALREADY_EXISTS naming `path` when something is there by then, which is left alone.
absl::Status CreateNpy(const std::string& path, const float* data, const std::vector<int64_t>& shape);

// Reads a .npy file (format version 1.x, 2.x or 3.x) holding a C-order little-endian
// float32 ('<f4') or float64 ('<f8', narrowed to float) array. Any other dtype,
// fortran_order True, or a payload whose size does not match the shape is an error that
// names the file and says how to convert it, as is a file larger than `max_bytes` (or
// than memory holds; common/file_io.h ReadFileBytes). A malformed header is quoted only
// around the fault.
absl::StatusOr<NpyArray> ReadNpy(const std::string& path, size_t max_bytes = SIZE_MAX);

}  // namespace gantry
