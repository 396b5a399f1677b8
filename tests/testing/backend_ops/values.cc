#include "tests/testing/backend_ops/values.h"

#include <cmath>

#include "common/bf16.h"
#include "common/check.h"
#include "common/fp16.h"
#include "tests/testing/gradient_check.h"

namespace gantry::testing {

std::vector<double> Doubles(const Tensor& t, MathPrecision precision, bool magnitude) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v = t.data()[i];
    if (precision == MathPrecision::kBf16) v = bf16::FromFloat(v).ToFloat();
    if (precision == MathPrecision::kFp16) v = fp16::FromFloat(v).ToFloat();
    out[static_cast<size_t>(i)] = magnitude ? std::fabs(double{v}) : double{v};
  }
  return out;
}

Tensor Floats(const std::vector<double>& values, const Shape& shape) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.numel());
  Tensor t = Tensor::Zeros(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>(values[static_cast<size_t>(i)]);
  return t;
}

Tensor Shifted(const Shape& shape, uint64_t seed, float scale, float offset) {
  Tensor t = RandomTensor(shape, seed, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] += offset;
  return t;
}

Tensor SumOfMagnitudes(const std::vector<Tensor>& terms) {
  Tensor sum = Tensor::Zeros(terms.front().shape());
  for (const Tensor& t : terms) {
    CHECK_EQ(t.numel(), sum.numel());
    for (int64_t i = 0; i < sum.numel(); ++i) sum.data()[i] += std::fabs(t.data()[i]);
  }
  return sum;
}

}  // namespace gantry::testing
