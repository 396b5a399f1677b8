// im2col lowering of one image, the building block of the reference convolutions
// (conv.cc): a convolution becomes a GEMM against the column matrix.
#pragma once

#include <cstdint>

#include "worker/tensor/conv_problem.h"

namespace gantry {

// Geometry of a square-kernel convolution, seen from the image side.
// The image is [channels, height, width]; the column matrix is
// [channels * kernel * kernel, out_height * out_width] where (out_y, out_x) indexes
// kernel positions: image pixel (out_y*stride - padding + ky, out_x*stride - padding + kx).
// The image may be larger than the column side covers (a transposed convolution's output
// padding): those pixels are never read, and Col2Im leaves them alone.
// cols_stride lets the column matrix be one sample's block of columns inside a wider
// matrix (a batch lowered side by side for one GEMM): row r of the block starts at
// cols + r * cols_stride. Columns outside the block are never read or written.
struct ConvGeometry {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
  int64_t kernel = 0;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t out_height = 0;
  int64_t out_width = 0;
  int64_t cols_stride = 0;  // row stride of the column matrix; 0: dense (col_cols())

  int64_t col_rows() const { return channels * kernel * kernel; }
  int64_t col_cols() const { return out_height * out_width; }
  int64_t col_stride() const { return cols_stride != 0 ? cols_stride : col_cols(); }
};

// The lowering of one sample of `p`: the image is its input, the column side its output.
ConvGeometry LoweringGeometry(const ConvProblem& p);

// cols = im2col(image); positions outside the image read as 0.
void Im2Col(const ConvGeometry& g, const float* image, float* cols);
// image += col2im(cols) (accumulates): the adjoint of Im2Col.
void Col2Im(const ConvGeometry& g, const float* cols, float* image);

}  // namespace gantry
