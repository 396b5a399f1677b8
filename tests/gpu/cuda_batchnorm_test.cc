// The CUDA BatchNorm ops (statistics, apply, backward and the activation fusions)
// against the Eigen reference, on the DCGAN's layouts at batch 64 and odd ones. Both
// sides sum in double, so statistics and gradient sums agree to fp32 rounding of the
// same double values; element-wise outputs within kElementwiseTolerance of the
// magnitudes of their terms.
#include <cmath>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "tests/gpu/gpu_harness.h"
#include "tests/testing/backend_compare.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using testing::Abs;
using testing::Cuda;
using testing::ExpectWithinBound;
using testing::kElementwiseTolerance;
using testing::RandomTensor;
using testing::SumAbs;
using testing::ToGpu;
using testing::ToHost;

struct Layout {
  int64_t n, c, hw;
};
// G's BN after the dense layer ([64, 12544]: 12544 features, hw = 1), its BN layers after
// the transposed convolutions ([64, 128, 7x7], [64, 64, 14x14]), and odd ones.
const Layout kLayouts[] = {{64, 256, 49}, {64, 128, 49}, {64, 64, 196}, {64, 12544, 1}, {3, 5, 7}, {2, 1, 1}};

constexpr float kEps = 1e-3f;

// Per channel: sum |x| / count (the magnitude of a mean) and the largest |x - mean|^2
// term scale (of a variance), broadcast back to a [c] tensor.
Tensor ChannelMeanAbs(const Layout& l, const Tensor& x) {
  Tensor out = Tensor::Zeros(Shape{l.c});
  CpuBackend().ChannelSum(l.n, l.c, l.hw, Abs(x).data(), out.data());
  for (int64_t ch = 0; ch < l.c; ++ch) out.data()[ch] /= static_cast<float>(l.n * l.hw);
  return out;
}

TEST(CudaBatchNormTest, StatsApplyAndBackwardMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (const Layout& l : kLayouts) {
    SCOPED_TRACE(std::to_string(l.n) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw));
    const Shape shape{l.n, l.c, l.hw}, channels{l.c};
    // An offset mean, as activations have: the two-pass variance must not cancel.
    Tensor x = RandomTensor(shape, 1, 2.0f);
    for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += 3.0f;
    const Tensor dy = RandomTensor(shape, 2), gamma = RandomTensor(channels, 3), beta = RandomTensor(channels, 4);
    const Tensor x_gpu = ToGpu(x), dy_gpu = ToGpu(dy), gamma_gpu = ToGpu(gamma), beta_gpu = ToGpu(beta);

    Tensor mean = Tensor::Zeros(channels), var = Tensor::Zeros(channels);
    CpuBackend().BatchNormStats(l.n, l.c, l.hw, x.data(), mean.data(), var.data());
    Tensor mean_gpu = ToGpu(mean), var_gpu = ToGpu(var);  // overwritten below
    mean_gpu.Fill(0.0f);
    var_gpu.Fill(0.0f);
    Cuda().BatchNormStats(l.n, l.c, l.hw, x_gpu.data(), mean_gpu.data(), var_gpu.data());
    ExpectWithinBound(ToHost(mean_gpu), mean, ChannelMeanAbs(l, x), kElementwiseTolerance, "mean");
    ExpectWithinBound(ToHost(var_gpu), var, var, kElementwiseTolerance, "variance");

    // From here on both sides use the reference statistics, so each op is compared alone.
    mean_gpu = ToGpu(mean);
    var_gpu = ToGpu(var);
    Tensor y = Tensor::Zeros(shape), y_gpu = Tensor::Zeros(shape, DType::kF32, Device::kCuda);
    CpuBackend().BatchNormApply(l.n, l.c, l.hw, x.data(), mean.data(), var.data(), kEps, gamma.data(), beta.data(),
                                y.data());
    Cuda().BatchNormApply(l.n, l.c, l.hw, x_gpu.data(), mean_gpu.data(), var_gpu.data(), kEps, gamma_gpu.data(),
                          beta_gpu.data(), y_gpu.data());
    Tensor beta_full = Tensor::Zeros(shape);  // |beta| broadcast
    CpuBackend().AddChannelBias(l.n, l.c, l.hw, Abs(beta).data(), beta_full.data());
    ExpectWithinBound(ToHost(y_gpu), y, SumAbs({y, beta_full}), kElementwiseTolerance, "apply");

    for (bool want_dx : {true, false}) {
      Tensor dx = Tensor::Zeros(shape), dgamma = RandomTensor(channels, 5), dbeta = RandomTensor(channels, 6);
      Tensor dx_gpu = ToGpu(dx), dgamma_gpu = ToGpu(dgamma), dbeta_gpu = ToGpu(dbeta);
      const Tensor dgamma0 = dgamma.Clone(), dbeta0 = dbeta.Clone();
      CpuBackend().BatchNormBackward(l.n, l.c, l.hw, x.data(), dy.data(), mean.data(), var.data(), kEps,
                                     gamma.data(), want_dx ? dx.data() : nullptr, dgamma.data(), dbeta.data());
      Cuda().BatchNormBackward(l.n, l.c, l.hw, x_gpu.data(), dy_gpu.data(), mean_gpu.data(), var_gpu.data(), kEps,
                               gamma_gpu.data(), want_dx ? dx_gpu.data() : nullptr, dgamma_gpu.data(),
                               dbeta_gpu.data());
      // The sums' magnitudes: sum |dy| and sum |dy| |x - mean| / std, per channel.
      Tensor sum_abs_dy = Abs(dbeta0);
      CpuBackend().ChannelSum(l.n, l.c, l.hw, Abs(dy).data(), sum_abs_dy.data());
      Tensor dgamma_mag = Abs(dgamma0), scaled = Abs(dy);
      for (int64_t i = 0; i < scaled.numel(); ++i) {
        const int64_t ch = (i / l.hw) % l.c;
        scaled.data()[i] *= std::abs(x.at(i) - mean.at(ch)) / std::sqrt(var.at(ch) + kEps);
      }
      CpuBackend().ChannelSum(l.n, l.c, l.hw, scaled.data(), dgamma_mag.data());
      ExpectWithinBound(ToHost(dbeta_gpu), dbeta, sum_abs_dy, kElementwiseTolerance, "dbeta");
      ExpectWithinBound(ToHost(dgamma_gpu), dgamma, dgamma_mag, kElementwiseTolerance, "dgamma");
      if (want_dx) {
        // dx = gamma/std * (dy - mean(dy) - xhat mean(dy xhat)): each term's size bounded by
        // |gamma|/std (|dy| + mean|dy| + |xhat| mean|dy xhat|); 1e-5 of that covers the
        // double sums rounded to fp32 coefficients on both sides.
        Tensor dx_mag = Tensor::Zeros(shape);
        for (int64_t i = 0; i < dx_mag.numel(); ++i) {
          const int64_t ch = (i / l.hw) % l.c;
          const double count = static_cast<double>(l.n * l.hw), invstd = 1.0 / std::sqrt(var.at(ch) + kEps);
          const double xhat = std::abs(x.at(i) - mean.at(ch)) * invstd;
          dx_mag.data()[i] = static_cast<float>(std::abs(gamma.at(ch)) * invstd *
                                                (std::abs(dy.at(i)) + sum_abs_dy.at(ch) / count +
                                                 xhat * dgamma_mag.at(ch) / count));
        }
        ExpectWithinBound(ToHost(dx_gpu), dx, dx_mag, 1e-5, "dx");
      }
    }
  }
}

TEST(CudaBatchNormTest, ActivationFusionsMatchTheReference) {
  GANTRY_CUDA_OR_SKIP();
  for (const Layout& l : kLayouts) {
    for (Activation f : {Activation::kLeakyRelu, Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
      SCOPED_TRACE(std::to_string(l.n) + "x" + std::to_string(l.c) + "x" + std::to_string(l.hw) + " f " +
                   std::to_string(static_cast<int>(f)));
      const Shape shape{l.n, l.c, l.hw}, channels{l.c};
      const Tensor x = RandomTensor(shape, 7), dy = RandomTensor(shape, 8), gamma = RandomTensor(channels, 9),
                   beta = RandomTensor(channels, 10);
      Tensor mean = Tensor::Zeros(channels), var = Tensor::Zeros(channels);
      CpuBackend().BatchNormStats(l.n, l.c, l.hw, x.data(), mean.data(), var.data());
      const Tensor x_gpu = ToGpu(x), mean_gpu = ToGpu(mean), var_gpu = ToGpu(var), gamma_gpu = ToGpu(gamma),
                   beta_gpu = ToGpu(beta);

      Tensor y = Tensor::Zeros(shape), y_gpu = Tensor::Zeros(shape, DType::kF32, Device::kCuda);
      CpuBackend().BatchNormActivationForward(l.n, l.c, l.hw, x.data(), mean.data(), var.data(), kEps, gamma.data(),
                                              beta.data(), f, 0.3f, y.data());
      Cuda().BatchNormActivationForward(l.n, l.c, l.hw, x_gpu.data(), mean_gpu.data(), var_gpu.data(), kEps,
                                        gamma_gpu.data(), beta_gpu.data(), f, 0.3f, y_gpu.data());
      // The pre-activation's terms bound the error; f is 1-Lipschitz or less.
      Tensor pre_mag = Tensor::Zeros(shape);
      CpuBackend().BatchNormApply(l.n, l.c, l.hw, Abs(x).data(), Tensor::Zeros(channels).data(), var.data(), kEps,
                                  Abs(gamma).data(), Abs(beta).data(), pre_mag.data());
      ExpectWithinBound(ToHost(y_gpu), y, SumAbs({y, pre_mag}), kElementwiseTolerance, "fused forward");

      Tensor dx = Tensor::Zeros(shape), dgamma = Tensor::Zeros(channels), dbeta = Tensor::Zeros(channels);
      Tensor dx_gpu = ToGpu(dx), dgamma_gpu = ToGpu(dgamma), dbeta_gpu = ToGpu(dbeta);
      const Tensor y_in = ToGpu(y);  // the same y on both sides
      CpuBackend().BatchNormActivationBackward(l.n, l.c, l.hw, x.data(), y.data(), dy.data(), mean.data(),
                                               var.data(), kEps, gamma.data(), f, 0.3f, dx.data(), dgamma.data(),
                                               dbeta.data());
      Cuda().BatchNormActivationBackward(l.n, l.c, l.hw, x_gpu.data(), y_in.data(), ToGpu(dy).data(),
                                         mean_gpu.data(), var_gpu.data(), kEps, gamma_gpu.data(), f, 0.3f,
                                         dx_gpu.data(), dgamma_gpu.data(), dbeta_gpu.data());
      // Scale-free bounds here: 1e-5 of each output's size plus 1e-5 of the tensor's mean size.
      for (auto [gpu, cpu, what] : {std::tuple{dx_gpu, dx, "dx"}, std::tuple{dgamma_gpu, dgamma, "dgamma"},
                                    std::tuple{dbeta_gpu, dbeta, "dbeta"}}) {
        Tensor mag = Abs(cpu);
        double mean_abs = 0.0;
        for (int64_t i = 0; i < mag.numel(); ++i) mean_abs += mag.at(i) / static_cast<double>(mag.numel());
        for (int64_t i = 0; i < mag.numel(); ++i) mag.data()[i] += static_cast<float>(mean_abs);
        ExpectWithinBound(ToHost(gpu), cpu, mag, 1e-5, what);
      }
    }
  }
}

}  // namespace
}  // namespace gantry
