// Under bf16 the matrix-product layers keep their input as bf16 for backward: half the
// bytes, and gradients bit-identical to keeping it in fp32 (the backward product rounds
// it to bf16 anyway).
#include "worker/layers/saved_input.h"

#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/conv_transpose2d.h"
#include "worker/layers/linear.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

using testing::RandomTensor;

struct Grads {
  std::vector<float> params;
  std::vector<float> input;
};

// Parameter and input gradients of one backward pass from `cache`.
Grads BackwardFrom(Layer& layer, FlatParameters& flat, const Context& ctx, const Tensor& dy,
                   const ActivationCache& cache) {
  flat.ZeroGrads();
  const Tensor dx = layer.Backward(ctx, dy, cache, /*want_input_grad=*/true);
  const Tensor& g = flat.grads();
  return {std::vector<float>(g.data(), g.data() + g.numel()), std::vector<float>(dx.data(), dx.data() + dx.numel())};
}

void ExpectBf16KeptAndSameGradients(Layer& layer, const Shape& input_shape) {
  Layer* layers[] = {&layer};
  FlatParameters flat(layers);
  Rng rng(3);
  flat.Initialize(InitScheme::kGlorotUniform, rng);
  Context ctx;
  ctx.precision = MathPrecision::kBf16;
  const Tensor x = RandomTensor(input_shape, 5);
  ActivationCache cache;
  const Tensor y = layer.Forward(ctx, x, &cache);
  ASSERT_EQ(cache.saved[0].dtype(), DType::kBF16) << layer.name();
  EXPECT_EQ(cache.saved[0].nbytes() * 2, x.nbytes()) << layer.name();
  const Tensor dy = RandomTensor(y.shape(), 7);
  const Grads kept_bf16 = BackwardFrom(layer, flat, ctx, dy, cache);

  ActivationCache fp32_cache = cache;
  fp32_cache.saved[0] = x;  // what the layer kept before: the fp32 input itself
  const Grads kept_fp32 = BackwardFrom(layer, flat, ctx, dy, fp32_cache);
  EXPECT_EQ(0, std::memcmp(kept_bf16.params.data(), kept_fp32.params.data(), kept_bf16.params.size() * 4))
      << layer.name() << ": parameter gradients differ";
  EXPECT_EQ(0, std::memcmp(kept_bf16.input.data(), kept_fp32.input.data(), kept_bf16.input.size() * 4))
      << layer.name() << ": input gradients differ";
}

TEST(SavedInput, Bf16LayersKeepHalfTheBytesAndTheSameGradients) {
  Linear linear(20, 7, /*bias=*/true);
  ExpectBf16KeptAndSameGradients(linear, Shape{4, 20});
  Conv2d conv(3, 8, 5, 2, 2, /*bias=*/true);
  ExpectBf16KeptAndSameGradients(conv, Shape{2, 3, 12, 12});
  ConvTranspose2d deconv(8, 4, 5, 2, 2, 1, /*bias=*/false);
  ExpectBf16KeptAndSameGradients(deconv, Shape{2, 8, 6, 6});
}

TEST(SavedInput, Fp32KeepsTheInputItself) {
  Tensor x = RandomTensor(Shape{2, 3}, 1);
  const Tensor kept = KeepInputForBackward(Context{}, x);
  EXPECT_EQ(kept.dtype(), DType::kF32);
  EXPECT_EQ(kept.data(), x.data());
}

TEST(SavedInput, WideningRestoresTheBf16Values) {
  const Tensor x = Tensor::FromVector(Shape{4}, {1.0f, -2.5f, 1.0f + 1.0f / 512, 3.0e38f});
  Context ctx;
  ctx.precision = MathPrecision::kBf16;
  const Tensor wide = SavedInputAsFloat(ctx, KeepInputForBackward(ctx, x));
  EXPECT_EQ(wide.at(0), 1.0f);
  EXPECT_EQ(wide.at(1), -2.5f);
  EXPECT_EQ(wide.at(2), 1.0f);  // 1 + 2^-9 is a tie between 1 and 1 + 2^-7: to even
  EXPECT_EQ(wide.at(3), bf16::FromFloat(3.0e38f).ToFloat());
}

}  // namespace
}  // namespace gantry
