// Layers with a fused activation (BatchNorm, Conv2d) against the same layer followed by a
// separate activation layer: identical function, gradients and parameter layout, in
// every BatchNorm mode, on every built backend; plus finite-difference checks.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "worker/layers/activation.h"
#include "worker/layers/batch_norm.h"
#include "worker/layers/conv2d.h"
#include "worker/layers/sequential.h"
#include "worker/optim/flat_parameters.h"
#include "worker/tensor/backend_registry.h"

namespace gantry {
namespace {

using testing::ExpectAllClose;
using testing::MaxAbs;
using testing::RandomTensor;

constexpr float kSlope = 0.3f;
constexpr FusedActivation kLeaky{Activation::kLeakyRelu, kSlope};

// Sums over one replica: sync-BN's code path with the single-process result.
class OneReplica final : public ReplicaReducer {
 public:
  void Sum(float*, int64_t) override {}
};

struct Pass {
  Tensor y, dx, grads, buffers;
};

// Forward + backward of `net` from a fixed initialisation (same specs, same values).
Pass RunNet(Sequential& net, const Context& ctx, const Tensor& x) {
  std::vector<Layer*> layers = net.layers();
  FlatParameters params(layers);
  Rng rng(5);
  params.Initialize(InitScheme::kGlorotUniform, rng);
  // Non-trivial gamma/beta/bias and running statistics, so no term vanishes.
  for (int64_t i = 0; i < params.params().numel(); ++i) params.params().data()[i] += 0.1f * static_cast<float>(i % 7);
  for (int64_t i = 0; i < params.buffers().numel(); ++i) params.buffers().data()[i] += 0.5f;
  params.ZeroGrads();
  SequentialCache cache;
  Pass pass;
  pass.y = net.Forward(ctx, x, &cache);
  pass.dx = net.Backward(ctx, RandomTensor(pass.y.shape(), 11), cache, /*want_input_grad=*/true);
  pass.grads = params.grads().Clone();
  pass.buffers = params.buffers().Clone();
  return pass;
}

void ExpectSame(const Pass& fused, const Pass& separate) {
  ExpectAllClose(fused.y, separate.y, 1e-6 * MaxAbs(separate.y), 1e-6, "y");
  ExpectAllClose(fused.dx, separate.dx, 1e-5 * MaxAbs(separate.dx), 1e-5, "dx");
  ExpectAllClose(fused.grads, separate.grads, 1e-5 * MaxAbs(separate.grads), 1e-5, "parameter gradients");
  if (separate.buffers.numel() > 0) ExpectAllClose(fused.buffers, separate.buffers, 0, 1e-6, "running statistics");
}

TEST(FusedActivationTest, BatchNormMatchesBatchNormThenLeakyRelu) {
  OneReplica one;
  for (const std::string& kernels : BuiltBackendNames()) {
    for (const Shape& shape : {Shape{6, 5}, Shape{4, 3, 5, 6}}) {
      for (const char* mode : {"training", "eval", "sync"}) {
        SCOPED_TRACE(kernels + " " + shape.ToString() + " " + mode);
        Context ctx;
        ctx.backend = FindBackend(kernels);
        ctx.training = std::string(mode) != "eval";
        ctx.sync_bn = std::string(mode) == "sync" ? &one : nullptr;
        Sequential fused, separate;
        fused.Add(std::make_unique<BatchNorm>(shape[1], 1e-3f, 0.9f, kLeaky));
        separate.Add(std::make_unique<BatchNorm>(shape[1], 1e-3f, 0.9f)).Add(MakeLeakyRelu(kSlope));
        const Tensor x = RandomTensor(shape, 3);
        ExpectSame(RunNet(fused, ctx, x), RunNet(separate, ctx, x));
      }
    }
  }
}

TEST(FusedActivationTest, Conv2dMatchesConv2dThenLeakyRelu) {
  for (const std::string& kernels : BuiltBackendNames()) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE(kernels + (bias ? " with bias" : " without bias"));
      Context ctx;
      ctx.backend = FindBackend(kernels);
      Sequential fused, separate;
      fused.Add(std::make_unique<Conv2d>(3, 4, 5, 2, 2, bias, kLeaky));
      separate.Add(std::make_unique<Conv2d>(3, 4, 5, 2, 2, bias)).Add(MakeLeakyRelu(kSlope));
      const Tensor x = RandomTensor(Shape{2, 3, 9, 8}, 4);
      ExpectSame(RunNet(fused, ctx, x), RunNet(separate, ctx, x));
    }
  }
}

TEST(FusedActivationTest, GradientsMatchFiniteDifferences) {
  // Tanh is smooth. LeakyReLU's kink at 0 defeats central differences where a probe
  // moves many pre-activations across it at once (any conv weight does; BatchNorm's
  // normalised outputs sit far enough from 0 with a small step), and the tests above
  // already pin fused LeakyReLU to the separate layer, which has its own check.
  testing::GradCheckOptions options;
  options.step = 1e-3;
  for (FusedActivation f : {kLeaky, FusedActivation{Activation::kTanh, 0.0f}}) {
    BatchNorm bn(3, 1e-3f, 0.99f, f);
    Conv2d conv(2, 3, 3, 1, 1, true, f);
    std::vector<Layer*> checked{&bn};
    if (f.f == Activation::kTanh) checked.push_back(&conv);
    for (Layer* layer : checked) {
      SCOPED_TRACE(layer->name() + (f.f == Activation::kTanh ? " tanh" : " leaky_relu"));
      Layer* layers[] = {layer};
      FlatParameters params(layers);
      Rng rng(6);
      params.Initialize(InitScheme::kGlorotUniform, rng);
      testing::CheckLayerGradients(*layer, &params, Shape{4, layer == &bn ? 3 : 2, 5, 5}, Context{}, options);
    }
  }
}

}  // namespace
}  // namespace gantry
