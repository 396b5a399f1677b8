// A batch of square-kernel 2-D convolutions, the unit of work of the Backend's
// convolution ops.
#pragma once

#include <cstdint>
#include <string>

#include "common/math_precision.h"

namespace gantry {

// Described from the convolution's side (NCHW, dense):
//   x [batch, in_channels, in_height, in_width], w [out_channels, in_channels, kernel, kernel],
//   y [batch, out_channels, out_height, out_width],
//   y[n, o, oy, ox] = sum over c, ky, kx of w[o, c, ky, kx] * x[n, c, oy*stride - padding + ky,
//                                                                 ox*stride - padding + kx]
// where x outside the image reads as 0. out_height must be ConvOutSize(in_height, ...)
// (likewise the width), so input rows past the last window are never read: that is how a
// transposed convolution's output padding appears here.
//
// ConvTranspose2d(C -> O, k, s, p, op) on [N, C, H, W] is the adjoint of this problem with
// in_channels = O at its output size, out_channels = C at H x W, and the same weight
// tensor ([C, O, k, k] is [out_channels, in_channels, k, k]): its forward is
// ConvBackwardData, its input gradient ConvForward, and its weight gradient
// ConvBackwardWeights with x = its dy and dy = its x.
struct ConvProblem {
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t in_height = 0;
  int64_t in_width = 0;
  int64_t out_height = 0;
  int64_t out_width = 0;
  int64_t kernel = 0;
  int64_t stride = 1;
  int64_t padding = 0;
  MathPrecision precision = MathPrecision::kFp32;

  int64_t in_image_size() const { return in_channels * in_height * in_width; }    // per sample
  int64_t out_image_size() const { return out_channels * out_height * out_width; }  // per sample
  int64_t weight_size() const { return out_channels * in_channels * kernel * kernel; }
  // Multiply-adds of one pass (forward, backward-data or backward-weights) over the
  // batch, counting the zero-padded taps as the dense definition does.
  double macs() const {
    return static_cast<double>(batch) * static_cast<double>(out_image_size()) *
           static_cast<double>(in_channels * kernel * kernel);
  }
  // The padding the window positions imply on the bottom (right) edge:
  // (out - 1) * stride + kernel - in - padding. It lies in [padding - (stride - 1), padding];
  // a negative value means trailing input rows that no window reaches.
  int64_t padding_bottom() const { return (out_height - 1) * stride + kernel - in_height - padding; }
  int64_t padding_right() const { return (out_width - 1) * stride + kernel - in_width - padding; }

  // A kernel over the whole unpadded input: one output pixel per sample, so each pass is
  // one matrix product over the batch (lowered_conv.cc takes it without im2col; the route
  // sends it there).
  bool kernel_covers_input() const { return padding == 0 && kernel == in_height && kernel == in_width; }

  bool operator==(const ConvProblem&) const = default;
  std::string ToString() const;
};

// The three passes of a convolution: Backend::ConvForward, ConvBackwardData and
// ConvBackwardWeights.
enum class ConvOp { kForward, kBackwardData, kBackwardWeights };

// floor((in + 2 * padding - kernel) / stride) + 1: the window positions along one axis.
constexpr int64_t ConvOutSize(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

// CHECK-fails, naming the problem, unless every size is positive (padding >= 0) and the
// output sizes follow from the input sizes.
void CheckConvProblem(const ConvProblem& p);

}  // namespace gantry
