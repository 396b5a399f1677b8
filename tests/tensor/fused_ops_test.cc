// The fused element-wise ops against the unfused ops they replace, on every built
// backend and every activation: same values (up to fp32 round-off in the reductions).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/gradient_check.h"
#include "worker/tensor/backend_registry.h"

namespace gantry {
namespace {

using testing::ExpectAllClose;
using testing::MaxAbs;
using testing::RandomTensor;

struct Dims {
  int64_t n, c, hw;
};

const Activation kActivations[] = {Activation::kLeakyRelu, Activation::kRelu, Activation::kTanh,
                                   Activation::kSigmoid};

TEST(FusedOpsTest, BatchNormActivationMatchesApplyThenActivation) {
  for (const std::string& kernels : BuiltBackendNames()) {
    Backend& be = *FindBackend(kernels);
    for (const Dims d : {Dims{7, 5, 1}, Dims{3, 4, 10}}) {
      for (Activation f : kActivations) {
        SCOPED_TRACE(kernels + " hw=" + std::to_string(d.hw) + " f=" + std::to_string(static_cast<int>(f)));
        const Shape s{d.n, d.c, d.hw};
        const Tensor x = RandomTensor(s, 1, 2.0f), dy = RandomTensor(s, 2);
        const Tensor gamma = RandomTensor(Shape{d.c}, 3), beta = RandomTensor(Shape{d.c}, 4);
        Tensor mean = Tensor::Zeros(Shape{d.c}), var = Tensor::Zeros(Shape{d.c});
        be.BatchNormStats(d.n, d.c, d.hw, x.data(), mean.data(), var.data());
        // Forward: fused against BatchNormApply + ActivationForward.
        Tensor fused = Tensor::Zeros(s), pre = Tensor::Zeros(s), separate = Tensor::Zeros(s);
        be.BatchNormActivationForward(d.n, d.c, d.hw, x.data(), mean.data(), var.data(), 1e-3f, gamma.data(),
                                      beta.data(), f, 0.3f, fused.data());
        be.BatchNormApply(d.n, d.c, d.hw, x.data(), mean.data(), var.data(), 1e-3f, gamma.data(), beta.data(),
                          pre.data());
        be.ActivationForward(f, 0.3f, pre.numel(), pre.data(), separate.data());
        ExpectAllClose(fused, separate, 0, 1e-6, "forward");
        // Backward: fused against ActivationBackward + BatchNormBackward.
        Tensor dx = Tensor::Zeros(s), dpre = Tensor::Zeros(s), dx_ref = Tensor::Zeros(s);
        Tensor dg = Tensor::Zeros(Shape{d.c}), db = Tensor::Zeros(Shape{d.c});
        Tensor dg_ref = Tensor::Zeros(Shape{d.c}), db_ref = Tensor::Zeros(Shape{d.c});
        be.BatchNormActivationBackward(d.n, d.c, d.hw, x.data(), separate.data(), dy.data(), mean.data(),
                                       var.data(), 1e-3f, gamma.data(), f, 0.3f, dx.data(), dg.data(), db.data());
        be.ActivationBackward(f, 0.3f, s.numel(), pre.data(), separate.data(), dy.data(), dpre.data());
        be.BatchNormBackward(d.n, d.c, d.hw, x.data(), dpre.data(), mean.data(), var.data(), 1e-3f, gamma.data(),
                             dx_ref.data(), dg_ref.data(), db_ref.data());
        ExpectAllClose(dx, dx_ref, 1e-6 * MaxAbs(dx_ref), 1e-5, "dx");
        ExpectAllClose(dg, dg_ref, 1e-6 * MaxAbs(dg_ref), 1e-5, "dgamma");
        ExpectAllClose(db, db_ref, 1e-6 * MaxAbs(db_ref), 1e-5, "dbeta");
      }
    }
  }
}

TEST(FusedOpsTest, AddChannelBiasActivationMatchesBiasThenActivation) {
  for (const std::string& kernels : BuiltBackendNames()) {
    Backend& be = *FindBackend(kernels);
    for (Activation f : kActivations) {
      SCOPED_TRACE(kernels + " f=" + std::to_string(static_cast<int>(f)));
      const Tensor y0 = RandomTensor(Shape{3, 4, 6}, 5), bias = RandomTensor(Shape{4}, 6);
      Tensor fused = y0.Clone(), separate = y0.Clone();
      be.AddChannelBiasActivation(3, 4, 6, bias.data(), f, 0.3f, fused.data());
      be.AddChannelBias(3, 4, 6, bias.data(), separate.data());
      be.ActivationForward(f, 0.3f, separate.numel(), separate.data(), separate.data());
      ExpectAllClose(fused, separate, 0, 0, "bias + activation");
    }
  }
}

}  // namespace
}  // namespace gantry
