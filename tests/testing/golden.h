// Golden reference values: PyTorch results saved as .npy under tests/golden/<case>/ by
// scripts/make_goldens.py (float64 computation on exact float32 inputs, each result
// rounded once to float32), and the comparisons the C++ tests make against them.
#pragma once

#include <string>

#include "worker/tensor/tensor.h"

namespace gantry::testing {

// tests/golden/<case_name>/<file> in the source tree. Inline so that it compiles inside
// each test binary, where GANTRY_SOURCE_DIR is defined (this library has no source dir
// of its own).
#ifdef GANTRY_SOURCE_DIR
inline std::string GoldenPath(const std::string& case_name, const std::string& file) {
  return std::string(GANTRY_SOURCE_DIR) + "/tests/golden/" + case_name + "/" + file;
}
#endif

// Reads the .npy file at `path` ('<f4' or '<f8', the latter narrowed to float) into a
// new tensor of the file's shape (a 0-d array becomes shape [1]). CHECK-fails with the
// reader's message when the file is missing or malformed: a test without its golden
// must not pass.
Tensor LoadNpyTensor(const std::string& path);

#ifdef GANTRY_SOURCE_DIR
inline Tensor LoadGolden(const std::string& case_name, const std::string& file) {
  return LoadNpyTensor(GoldenPath(case_name, file));
}
#endif

// Largest |x| over the tensor (0 for an empty one); for tolerances that scale with the
// values compared.
double MaxAbs(const Tensor& t);

// Adds a gtest failure unless the shapes match and every element satisfies
// |actual - expected| <= atol + rtol * |expected| (numpy.allclose's rule). A failure
// names `what`, counts the violating elements and prints the worst one (largest error
// relative to its allowance) with its index, both values and the largest absolute error.
// NaN anywhere in `actual` fails.
void ExpectAllClose(const Tensor& actual, const Tensor& expected, double atol, double rtol,
                    const std::string& what);

}  // namespace gantry::testing
