// The element-wise, dropout, batch-norm and loss kernels of the reference CPU backend,
// against closed forms and naive double-precision references.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "worker/tensor/backend.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

std::vector<float> Uniform(int64_t n, uint64_t seed, float lo, float hi) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.Uniform());
  return v;
}

TEST(ActivationKernelTest, ForwardValues) {
  Backend& b = CpuBackend();
  const std::vector<float> x = {-2.0f, -0.5f, 0.0f, 1.5f};
  std::vector<float> y(4);
  b.ActivationForward(Activation::kLeakyRelu, 0.2f, 4, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-0.4f, -0.1f, 0.0f, 1.5f}));
  b.ActivationForward(Activation::kRelu, 0.2f, 4, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.0f, 0.0f, 1.5f}));
  b.ActivationForward(Activation::kTanh, 0.0f, 4, x.data(), y.data());
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], std::tanh(x[i]));
  b.ActivationForward(Activation::kSigmoid, 0.0f, 4, x.data(), y.data());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], 1.0 / (1.0 + std::exp(-double{x[i]})), 1e-7);
}

TEST(ActivationKernelTest, SaturatesWithoutNaN) {
  const std::vector<float> x = {-100.0f, 100.0f};
  std::vector<float> y(2);
  CpuBackend().ActivationForward(Activation::kSigmoid, 0.0f, 2, x.data(), y.data());
  EXPECT_NEAR(y[0], 0.0f, 1e-40);  // exp(-100) is a float denormal
  EXPECT_EQ(y[1], 1.0f);
  CpuBackend().ActivationForward(Activation::kTanh, 0.0f, 2, x.data(), y.data());
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 1.0f);
}

TEST(ActivationKernelTest, BackwardMatchesCentralDifferences) {
  Backend& b = CpuBackend();
  // Keep clear of the kink at 0, where LeakyReLU/ReLU have no derivative.
  std::vector<float> x = Uniform(64, 1, -3.0f, 3.0f);
  for (float& v : x) v += v >= 0.0f ? 0.05f : -0.05f;
  const std::vector<float> dy = Uniform(64, 2, -1.0f, 1.0f);
  for (Activation f : {Activation::kLeakyRelu, Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    std::vector<float> y(64), dx(64);
    b.ActivationForward(f, 0.2f, 64, x.data(), y.data());
    b.ActivationBackward(f, 0.2f, 64, x.data(), y.data(), dy.data(), dx.data());
    for (int i = 0; i < 64; ++i) {
      const float h = 1e-3f;
      float lo, hi;
      const float xl = x[i] - h, xh = x[i] + h;
      b.ActivationForward(f, 0.2f, 1, &xl, &lo);
      b.ActivationForward(f, 0.2f, 1, &xh, &hi);
      EXPECT_NEAR(dx[i], dy[i] * (double{hi} - lo) / (xh - xl), 2e-3)
          << "function " << static_cast<int>(f) << " x=" << x[i];
    }
  }
}

TEST(ActivationKernelTest, BackwardMayAliasDyAndNeedsOnlyOneOfXY) {
  Backend& b = CpuBackend();
  const std::vector<float> x = {-1.0f, 2.0f};
  std::vector<float> g = {3.0f, 3.0f};
  b.ActivationBackward(Activation::kLeakyRelu, 0.1f, 2, x.data(), nullptr, g.data(), g.data());
  EXPECT_FLOAT_EQ(g[0], 0.3f);
  EXPECT_FLOAT_EQ(g[1], 3.0f);
  const std::vector<float> y = {0.5f, -0.5f};
  g = {2.0f, 2.0f};
  b.ActivationBackward(Activation::kTanh, 0.0f, 2, nullptr, y.data(), g.data(), g.data());
  EXPECT_FLOAT_EQ(g[0], 1.5f);
  EXPECT_FLOAT_EQ(g[1], 1.5f);
}

TEST(ElementwiseKernelTest, MultiplyAxpyScaleCopy) {
  Backend& b = CpuBackend();
  std::vector<float> a = {1, 2, 3}, c = {4, 5, 6}, out(3);
  b.Multiply(3, a.data(), c.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{4, 10, 18}));
  b.Multiply(3, a.data(), c.data(), a.data());  // aliasing the output
  EXPECT_EQ(a, (std::vector<float>{4, 10, 18}));
  b.Axpy(3, 0.5f, c.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{6, 12.5f, 21}));
  b.Scale(3, -2.0f, out.data());
  EXPECT_EQ(out, (std::vector<float>{-12, -25, -42}));
  b.Copy(3, c.data(), out.data());
  EXPECT_EQ(out, c);
}

TEST(DropoutKernelTest, DropsAtTheRateAndScalesSurvivors) {
  constexpr int64_t kN = 100000;
  const std::vector<float> x = Uniform(kN, 3, 0.5f, 1.5f);
  std::vector<float> mask(kN), y(kN);
  CpuBackend().DropoutForward(kN, 0.3f, 42, x.data(), mask.data(), y.data());
  int64_t dropped = 0;
  for (int64_t i = 0; i < kN; ++i) {
    if (mask[i] == 0.0f) {
      ++dropped;
      EXPECT_EQ(y[i], 0.0f);
    } else {
      ASSERT_FLOAT_EQ(mask[i], 1.0f / 0.7f) << i;
      ASSERT_FLOAT_EQ(y[i], x[i] / 0.7f) << i;
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / kN, 0.3, 0.01);
}

TEST(DropoutKernelTest, MaskIsAFunctionOfTheSeed) {
  constexpr int64_t kN = 1000;
  const std::vector<float> x(kN, 1.0f);
  std::vector<float> m1(kN), m2(kN), m3(kN), y(kN);
  CpuBackend().DropoutForward(kN, 0.5f, 7, x.data(), m1.data(), y.data());
  CpuBackend().DropoutForward(kN, 0.5f, 7, x.data(), m2.data(), y.data());
  CpuBackend().DropoutForward(kN, 0.5f, 8, x.data(), m3.data(), y.data());
  EXPECT_EQ(m1, m2);
  int differing = 0;
  for (int64_t i = 0; i < kN; ++i) differing += m1[i] != m3[i];
  EXPECT_GT(differing, kN / 4);  // independent masks differ in about half the elements
}

TEST(DropoutKernelTest, RateZeroKeepsEverything) {
  const std::vector<float> x = Uniform(1000, 4, -1.0f, 1.0f);
  std::vector<float> mask(1000), y(1000);
  CpuBackend().DropoutForward(1000, 0.0f, 9, x.data(), mask.data(), y.data());
  EXPECT_EQ(mask, std::vector<float>(1000, 1.0f));
  EXPECT_EQ(y, x);
}

// Naive double-precision per-channel mean and biased variance of x viewed as [n, c, hw].
void NaiveStats(int64_t n, int64_t c, int64_t hw, const std::vector<float>& x, std::vector<double>* mean,
                std::vector<double>* var) {
  mean->assign(c, 0.0);
  var->assign(c, 0.0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) (*mean)[ch] += x[(i * c + ch) * hw + k];
    (*mean)[ch] /= static_cast<double>(n * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < hw; ++k) (*var)[ch] += std::pow(x[(i * c + ch) * hw + k] - (*mean)[ch], 2);
    (*var)[ch] /= static_cast<double>(n * hw);
  }
}

TEST(BatchNormKernelTest, StatsAreAccurateDespiteALargeOffset) {
  // A mean 1000x the standard deviation: E[x^2] - E[x]^2 in float would lose it all.
  for (int64_t hw : {1, 37}) {
    const int64_t n = 16, c = 3;
    std::vector<float> x = Uniform(n * c * hw, 5, -1.0f, 1.0f);
    for (float& v : x) v += 1000.0f;
    std::vector<float> mean(c), var(c);
    CpuBackend().BatchNormStats(n, c, hw, x.data(), mean.data(), var.data());
    std::vector<double> ref_mean, ref_var;
    NaiveStats(n, c, hw, x, &ref_mean, &ref_var);
    for (int64_t ch = 0; ch < c; ++ch) {
      EXPECT_NEAR(mean[ch], ref_mean[ch], 1e-4) << "hw=" << hw;
      EXPECT_NEAR(var[ch], ref_var[ch], 1e-5 * ref_var[ch]) << "hw=" << hw;
    }
  }
}

TEST(BatchNormKernelTest, ApplyAndBackwardMatchNaiveFormulas) {
  for (int64_t hw : {1, 9}) {
    const int64_t n = 5, c = 2, m = n * hw;
    const std::vector<float> x = Uniform(n * c * hw, 6, -2.0f, 3.0f);
    const std::vector<float> dy = Uniform(n * c * hw, 7, -1.0f, 1.0f);
    const std::vector<float> gamma = {1.5f, -0.5f}, beta = {0.25f, 2.0f};
    const float eps = 1e-3f;
    std::vector<float> mean(c), var(c), y(x.size()), dx(x.size());
    std::vector<float> dgamma = {1.0f, 1.0f}, dbeta = {1.0f, 1.0f};
    Backend& b = CpuBackend();
    b.BatchNormStats(n, c, hw, x.data(), mean.data(), var.data());
    b.BatchNormApply(n, c, hw, x.data(), mean.data(), var.data(), eps, gamma.data(), beta.data(), y.data());
    b.BatchNormBackward(n, c, hw, x.data(), dy.data(), mean.data(), var.data(), eps, gamma.data(), dx.data(),
                        dgamma.data(), dbeta.data());
    for (int64_t ch = 0; ch < c; ++ch) {
      const double invstd = 1.0 / std::sqrt(double{var[ch]} + eps);
      double sum_dy = 0.0, sum_dy_xhat = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < hw; ++k) {
          const int64_t j = (i * c + ch) * hw + k;
          sum_dy += dy[j];
          sum_dy_xhat += dy[j] * (x[j] - mean[ch]) * invstd;
        }
      }
      EXPECT_NEAR(dgamma[ch], 1.0 + sum_dy_xhat, 1e-5);  // accumulated onto 1
      EXPECT_NEAR(dbeta[ch], 1.0 + sum_dy, 1e-5);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < hw; ++k) {
          const int64_t j = (i * c + ch) * hw + k;
          const double xhat = (x[j] - mean[ch]) * invstd;
          EXPECT_NEAR(y[j], xhat * gamma[ch] + beta[ch], 1e-5);
          const double ref = gamma[ch] * invstd / m * (m * dy[j] - sum_dy - xhat * sum_dy_xhat);
          EXPECT_NEAR(dx[j], ref, 1e-5) << "hw=" << hw << " j=" << j;
        }
      }
    }
    // Without dx the parameter gradients still accumulate.
    const std::vector<float> dgamma1 = dgamma, dbeta1 = dbeta;
    b.BatchNormBackward(n, c, hw, x.data(), dy.data(), mean.data(), var.data(), eps, gamma.data(), nullptr,
                        dgamma.data(), dbeta.data());
    for (int64_t ch = 0; ch < c; ++ch) {
      EXPECT_NEAR(dgamma[ch] - 1.0, 2.0 * (dgamma1[ch] - 1.0), 1e-5);
      EXPECT_NEAR(dbeta[ch] - 1.0, 2.0 * (dbeta1[ch] - 1.0), 1e-5);
    }
  }
}

TEST(LossKernelTest, BceKnownValuesAndGradient) {
  Backend& b = CpuBackend();
  const float zero = 0.0f;
  float grad = 0.0f;
  EXPECT_NEAR(b.BceWithLogits(1, &zero, 1.0f, &grad), std::log(2.0), 1e-7);
  EXPECT_FLOAT_EQ(grad, -0.5f);
  EXPECT_NEAR(b.BceWithLogits(1, &zero, 0.0f, nullptr), std::log(2.0), 1e-7);
  const std::vector<float> x = {1.0f, -2.0f, 0.5f};
  std::vector<float> g(3);
  const double loss = b.BceWithLogits(3, x.data(), 0.9f, g.data());
  double ref = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-double{x[i]}));
    ref -= 0.9 * std::log(s) + 0.1 * std::log(1.0 - s);
    EXPECT_NEAR(g[i], (s - 0.9) / 3.0, 1e-7);
  }
  EXPECT_NEAR(loss, ref / 3.0, 1e-6);
}

TEST(LossKernelTest, BceIsStableForHugeLogits) {
  Backend& b = CpuBackend();
  const std::vector<float> x = {100.0f, -100.0f};
  std::vector<float> g(2);
  EXPECT_NEAR(b.BceWithLogits(2, x.data(), 1.0f, g.data()), 50.0, 1e-6);  // (0 + 100) / 2
  EXPECT_NEAR(g[0], 0.0f, 1e-40);
  EXPECT_FLOAT_EQ(g[1], -0.5f);
  EXPECT_NEAR(b.BceWithLogits(2, x.data(), 0.0f, g.data()), 50.0, 1e-6);
  EXPECT_FLOAT_EQ(g[0], 0.5f);
  EXPECT_NEAR(g[1], 0.0f, 1e-40);
}

TEST(LossKernelTest, L1ValuesAndSubgradient) {
  const std::vector<float> pred = {1.0f, -2.0f, 3.0f, 0.5f}, target = {0.0f, 1.0f, 3.0f, 0.25f};
  std::vector<float> g(4);
  const double loss = CpuBackend().L1Loss(4, pred.data(), target.data(), g.data());
  EXPECT_NEAR(loss, (1.0 + 3.0 + 0.0 + 0.25) / 4, 1e-7);
  EXPECT_EQ(g, (std::vector<float>{0.25f, -0.25f, 0.0f, 0.25f}));
}

}  // namespace
}  // namespace gantry
