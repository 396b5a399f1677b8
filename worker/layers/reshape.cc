#include "worker/layers/reshape.h"

#include <utility>

namespace gantry {
namespace {

// Forward caches x (a view, no copy) only to recover the input shape here.
Tensor ViewBack(const Tensor& dy, const ActivationCache& cache, const char* layer) {
  CHECK_EQ(cache.saved.size(), 1u) << layer << ": cache is not from this layer's Forward";
  const Shape& input = cache.saved[0].shape();
  CHECK_EQ(dy.numel(), input.numel()) << layer << ": dy " << dy.shape().ToString() << " vs input "
                                      << input.ToString();
  return dy.Reshaped(input);
}

int64_t PerSampleNumel(const Shape& s) {
  CHECK_GE(s.rank(), 1) << "a batch needs a leading dimension";
  int64_t n = 1;
  for (int i = 1; i < s.rank(); ++i) n *= s[i];
  return n;
}

}  // namespace

Reshape::Reshape(Shape per_sample_shape) : per_sample_shape_(std::move(per_sample_shape)) {}

Shape Reshape::OutputShape(const Shape& input) const {
  CHECK_EQ(PerSampleNumel(input), per_sample_shape_.numel())
      << "cannot reshape " << input.ToString() << " to samples of " << per_sample_shape_.ToString();
  std::vector<int64_t> dims{input[0]};
  dims.insert(dims.end(), per_sample_shape_.dims().begin(), per_sample_shape_.dims().end());
  return Shape(std::move(dims));
}

Tensor Reshape::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  cache->saved = {x};
  return x.Reshaped(OutputShape(x.shape()));
}

Tensor Reshape::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                         bool want_input_grad) {
  return want_input_grad ? ViewBack(dy, cache, "reshape") : Tensor();
}

Shape Flatten::OutputShape(const Shape& input) const {
  const int64_t per_sample = PerSampleNumel(input);
  return Shape{input[0], per_sample};
}

Tensor Flatten::Forward(const Context& ctx, const Tensor& x, ActivationCache* cache) {
  cache->saved = {x};
  return x.Reshaped(OutputShape(x.shape()));
}

Tensor Flatten::Backward(const Context& ctx, const Tensor& dy, const ActivationCache& cache,
                         bool want_input_grad) {
  return want_input_grad ? ViewBack(dy, cache, "flatten") : Tensor();
}

}  // namespace gantry
