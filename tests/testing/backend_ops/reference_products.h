// The op suite's references for the matrix products, in double straight from their
// definitions (worker/tensor/backend.h, worker/tensor/conv_problem.h; a convolution one
// kernel tap at a time): no blocking, nothing shared with the backends. Operands come in
// as double vectors so a caller can pass them rounded to a 16-bit format, or as
// magnitudes (|operands|).
#pragma once

#include <cstdint>
#include <vector>

#include "tests/testing/backend_ops/op_case.h"
#include "worker/tensor/conv_problem.h"

namespace gantry::testing {

// C = alpha op(A) op(B) + beta C over the stored (padded) matrices; C's elements past
// column n are left as they are, and beta == 0 ignores C's old values.
void ReferenceGemm(const GemmShape& s, double alpha, const std::vector<double>& a, const std::vector<double>& b,
                   double beta, std::vector<double>& c);

// The three passes of a convolution. Backward-weights returns the gradient alone (the
// caller adds the accumulator's start).
std::vector<double> ReferenceConvForward(const ConvProblem& p, const std::vector<double>& x,
                                         const std::vector<double>& w);
std::vector<double> ReferenceConvBackwardData(const ConvProblem& p, const std::vector<double>& dy,
                                              const std::vector<double>& w);
std::vector<double> ReferenceConvBackwardWeights(const ConvProblem& p, const std::vector<double>& x,
                                                 const std::vector<double>& dy);

}  // namespace gantry::testing
