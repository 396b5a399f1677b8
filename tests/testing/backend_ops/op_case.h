// The backend op suite's table: one row (OpCase) per Backend operation, precision and
// set of shapes, run on every built backend by tests/tensor/backend_ops_test.cc (and on
// the CUDA backend by tests/gpu/cuda_backend_ops_test.cc). A row names the Backend virtual
// it calls, the shapes it runs on and the bound of each output it checks; its check
// function computes the reference (in double, from the op's definition in
// worker/tensor/backend.h) and compares. Adding an op is one row and, for a new kind of
// op, one check function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/math_precision.h"
#include "worker/tensor/conv_problem.h"

namespace gantry::testing {

class OpRun;

// C[m,n] = alpha op(A) op(B) + beta C with `pad` elements past each stored row.
struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad = 0;
};

// A tensor viewed as [n, c, hw] (per-channel ops, BatchNorm).
struct Layout {
  int64_t n = 0, c = 0, hw = 0;
};

// The shapes a row runs on: GEMMs, convolutions, [n, c, hw] layouts or flat counts.
using OpShapes =
    std::variant<std::vector<GemmShape>, std::vector<ConvProblem>, std::vector<Layout>, std::vector<int64_t>>;

// The largest |actual - expected| allowed for one output, in units of the per-element
// magnitude its check computes (the same expression over |terms|), on host backends and
// on device (GPU) backends. 0 means bit-exact (NaN matching any NaN).
struct OutputBound {
  std::string_view output;
  double host;
  double device;
};

struct OpCase {
  std::string name;     // unique; the gtest name after the backend's
  std::string_view op;  // the Backend virtual this row calls
  MathPrecision precision;
  OpShapes shapes;  // every backend runs these
  // ... and device (GPU) backends these too: the DCGAN's training sizes, where a GPU
  // kernel's grid and tiling change with size. Host backends run the same code paths at
  // the sizes above, and the references of these would take a small CPU minutes.
  OpShapes device_shapes;
  std::vector<OutputBound> bounds;
  void (*check)(OpRun& run);
};

// Every row, in one place (backend_ops/op_table.cc).
const std::vector<OpCase>& OpCases();

// "<op>/<precision>/<name>" for messages and reports.
std::string Describe(const OpCase& c);

}  // namespace gantry::testing
