#include "tests/testing/layer_contract.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/cpu/cpu_backend.h"

namespace gantry::testing {

void CheckParamGradsFlagHonoured(Layer& layer, FlatParameters& params, const Shape& input_shape) {
  params.grads().Fill(0.25f);
  const Tensor x = RandomTensor(input_shape, 5);
  const Tensor dy = RandomTensor(layer.OutputShape(input_shape), 6);
  ActivationCache cache;
  layer.Forward(Context{}, x, &cache);
  Context frozen;
  frozen.param_grads = false;
  const Tensor dx_frozen = layer.Backward(frozen, dy, cache, /*want_input_grad=*/true);
  for (int64_t i = 0; i < params.grads().numel(); ++i) ASSERT_EQ(params.grads().at(i), 0.25f) << layer.name() << " " << i;
  const Tensor dx = layer.Backward(Context{}, dy, cache, /*want_input_grad=*/true);
  ASSERT_EQ(dx_frozen.shape(), input_shape);
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_EQ(dx_frozen.at(i), dx.at(i)) << layer.name() << " " << i;
  EXPECT_FALSE(layer.Backward(frozen, dy, cache, /*want_input_grad=*/false).defined());
}

void CheckParamGradsAccumulate(Layer& layer, FlatParameters& params, const Shape& input_shape) {
  const Tensor x = RandomTensor(input_shape, 8);
  const Tensor dy = RandomTensor(layer.OutputShape(input_shape), 9);
  ActivationCache cache;
  layer.Forward(Context{}, x, &cache);
  params.ZeroGrads();
  EXPECT_FALSE(layer.Backward(Context{}, dy, cache, /*want_input_grad=*/false).defined());
  const Tensor once = params.grads().Clone();
  layer.Backward(Context{}, dy, cache, /*want_input_grad=*/true);
  bool any_nonzero = false;
#if defined(__aarch64__) && defined(GANTRY_HAVE_ONEDNN)
  // oneDNN's GEMM on arm64 without SVE (its reference kernel) adds the product to the
  // gradient one k-block at a time, a reordered sum: 2x holds to fp32 round-off of the
  // gradients' scale, not to 4 ulps of each. Overwriting (1x) or adding twice (3x) is
  // still off by half the largest gradient.
  float largest = 0.0f;
  for (int64_t i = 0; i < once.numel(); ++i) largest = std::max(largest, std::abs(2.0f * once.at(i)));
  const double bound = kReorderedSumTolerance * largest;
  for (int64_t i = 0; i < once.numel(); ++i) {
    any_nonzero |= once.at(i) != 0.0f;
    EXPECT_NEAR(params.grads().at(i), 2.0f * once.at(i), bound) << layer.name() << " " << i;
  }
#else
  // Eigen and oneDNN's x86 kernels add their finished product to the gradient: 2x exactly,
  // up to the rounding of that one addition.
  for (int64_t i = 0; i < once.numel(); ++i) {
    any_nonzero |= once.at(i) != 0.0f;
    EXPECT_FLOAT_EQ(params.grads().at(i), 2.0f * once.at(i)) << layer.name() << " " << i;
  }
#endif
  EXPECT_TRUE(any_nonzero) << layer.name();
}

namespace {

// One Forward + Backward (input and parameter gradients) from zeroed gradients.
struct Pass {
  Tensor y, dx, grads;
};

Pass RunPass(Layer& layer, FlatParameters& params, const Tensor& x, const Tensor& dy, Backend& backend) {
  params.ZeroGrads();
  ActivationCache cache;
  Context ctx;
  ctx.backend = &backend;
  Pass pass;
  pass.y = layer.Forward(ctx, x, &cache);
  pass.dx = layer.Backward(ctx, dy, cache, /*want_input_grad=*/true);
  pass.grads = params.grads().Clone();
  return pass;
}

}  // namespace

void CheckChunkedBatchMatchesOneChunk(Layer& layer, FlatParameters& params, const Shape& input_shape,
                                      int64_t column_floats_per_sample) {
  params.params().CopyFrom(RandomTensor(params.params().shape(), 21));
  const Tensor x = RandomTensor(input_shape, 22);
  const Tensor dy = RandomTensor(layer.OutputShape(x.shape()), 23);
  const Pass whole = RunPass(layer, params, x, dy, CpuBackend());
  EigenCpuBackend backend;
  const int64_t per_sample = column_floats_per_sample;
  for (int64_t chunk : {1, 2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << "chunk=" << chunk);
    backend.set_max_column_floats(chunk * per_sample + per_sample - 1);
    const Pass chunked = RunPass(layer, params, x, dy, backend);
    ExpectAllClose(chunked.y, whole.y, 1e-5, 1e-5, "y");
    ExpectAllClose(chunked.dx, whole.dx, 1e-5, 1e-5, "dx");
    ExpectAllClose(chunked.grads, whole.grads, 1e-5, 1e-5, "grads");
  }
  backend.set_max_column_floats(1);
  ExpectAllClose(RunPass(layer, params, x, dy, backend).grads, whole.grads, 1e-5, 1e-5, "grads");
}

}  // namespace gantry::testing
