// oneDNN convolution plans per problem shape (see onednn_plan.h for what a plan is).
#pragma once

#include "worker/tensor/conv_problem.h"
#include "worker/tensor/onednn/onednn_plan.h"

namespace gantry::onednn {

// How a plan computes its op.
enum class ConvAlgorithm {
  kDirect,  // oneDNN's primitive for the op
  // Backward-weights only: a forward convolution with the batch and channels swapped,
  //   dw[o, c, ky, kx] = sum over n, oy, ox of x[n, c, oy*s - p + ky, ox*s - p + kx] * dy[n, o, oy, ox]
  // is, for each c, a convolution of the image x[:, c] (the batch as its channels) with
  // the "kernel" dy[:, o] (oh x ow taps, dilated by the stride): src [C, N, H, W],
  // weights [O, N, oh, ow], dst [C, O, k, k]. The caller's NCHW arrays are these
  // tensors with permuted strides, so the plan's reorders do the swapping.
  kBatchAsChannels,
};

// This thread's plan for `op` of `p` (p.precision kFp32 or kBf16: the operand type of
// the kernel), built on first use; null where oneDNN rejects the problem (remembered).
// Inputs, in order: forward (x, w), backward-data (dy, w), backward-weights (x, dy);
// backward-weights accumulates into the output.
Plan* FindConvPlan(const ConvProblem& p, ConvOp op, ConvAlgorithm algorithm);

}  // namespace gantry::onednn
