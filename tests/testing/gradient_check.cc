#include "tests/testing/gradient_check.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "worker/tensor/random.h"

namespace gantry::testing {

Tensor RandomTensor(const Shape& shape, uint64_t seed, float scale) {
  Tensor t = Tensor::Zeros(shape);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<float>((2.0 * rng.Uniform() - 1.0) * scale);
  return t;
}

void CheckGradientOf(const std::function<double()>& f, const Tensor& x, const Tensor& analytic,
                     const std::string& what, const GradCheckOptions& options) {
  ASSERT_EQ(x.numel(), analytic.numel()) << what;
  const int64_t n = x.numel();
  const int64_t stride = std::max<int64_t>(1, n / options.max_checks);
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 5; i += stride) {
    float* p = x.data() + i;
    const float saved = *p;
    const double h = options.step * std::max(1.0, std::fabs(static_cast<double>(saved)));
    *p = static_cast<float>(saved + h);
    const double plus = f();
    *p = static_cast<float>(saved - h);
    const double minus = f();
    *p = saved;
    const double numeric = (plus - minus) / (2.0 * h);
    const double a = analytic.at(i);
    const double err = std::fabs(a - numeric) / std::max({std::fabs(a), std::fabs(numeric), options.floor});
    if (err > options.tolerance) {
      ++failures;
      ADD_FAILURE() << what << "[" << i << "]: analytic " << a << " vs numeric " << numeric << " (rel err "
                    << err << ")";
    }
  }
}

void CheckLayerGradients(Layer& layer, FlatParameters* params, const Shape& input_shape, const Context& ctx,
                         const GradCheckOptions& options) {
  const Tensor x = RandomTensor(input_shape, options.seed);
  const Shape out_shape = layer.OutputShape(input_shape);
  const Tensor w = RandomTensor(out_shape, options.seed + 1);

  auto loss = [&]() {
    ActivationCache cache;
    const Tensor y = layer.Forward(ctx, x, &cache);
    double s = 0.0;
    for (int64_t i = 0; i < y.numel(); ++i) s += static_cast<double>(w.at(i)) * y.at(i);
    return s;
  };

  if (params != nullptr) params->ZeroGrads();
  ActivationCache cache;
  const Tensor y = layer.Forward(ctx, x, &cache);
  ASSERT_EQ(y.shape(), out_shape) << layer.name() << ": Forward shape differs from OutputShape";
  const Tensor dx = layer.Backward(ctx, w, cache, /*want_input_grad=*/true);
  ASSERT_TRUE(dx.defined()) << layer.name();
  ASSERT_EQ(dx.shape(), input_shape) << layer.name();
  CheckGradientOf(loss, x, dx, layer.name() + " input", options);
  if (params != nullptr && params->num_params() > 0) {
    CheckGradientOf(loss, params->params(), params->grads(), layer.name() + " params", options);
  }
}

}  // namespace gantry::testing
