#include <cmath>

#include "gtest/gtest.h"
#include "worker/optim/adam.h"
#include "worker/optim/optimizer.h"
#include "worker/optim/sgd.h"

namespace gantry {
namespace {

TEST(Adam, MatchesTheFormulaOverSeveralSteps) {
  const AdamConfig c{0.01f, 0.5f, 0.999f, 1e-7f};
  Adam adam(c, 2);
  const Tensor p = Tensor::FromVector(Shape{2}, {1.0f, -2.0f});
  double ref_p[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
  const double grads[3][2] = {{0.5, -1.0}, {0.25, 3.0}, {-0.75, 0.1}};
  for (int t = 1; t <= 3; ++t) {
    const Tensor g = Tensor::FromVector(Shape{2}, {static_cast<float>(grads[t - 1][0]), static_cast<float>(grads[t - 1][1])});
    adam.Step(CpuBackend(), p, g);
    for (int i = 0; i < 2; ++i) {
      m[i] = 0.5 * m[i] + 0.5 * grads[t - 1][i];
      v[i] = 0.999 * v[i] + 0.001 * grads[t - 1][i] * grads[t - 1][i];
      const double mhat = m[i] / (1 - std::pow(0.5, t));
      const double vhat = v[i] / (1 - std::pow(0.999, t));
      ref_p[i] -= 0.01 * mhat / (std::sqrt(vhat) + 1e-7);
      EXPECT_NEAR(p.at(i), ref_p[i], 1e-6) << "step " << t << " element " << i;
    }
  }
  EXPECT_EQ(adam.steps_taken(), 3);
  EXPECT_EQ(adam.state().size(), 2u);
}

TEST(Sgd, AppliesMomentum) {
  Sgd sgd(0.1f, 0.9f, 1);
  const Tensor p = Tensor::FromVector(Shape{1}, {1.0f});
  const Tensor g = Tensor::FromVector(Shape{1}, {1.0f});
  sgd.Step(CpuBackend(), p, g);  // buf 1, p 0.9
  sgd.Step(CpuBackend(), p, g);  // buf 1.9, p 0.71
  EXPECT_NEAR(p.at(0), 0.71f, 1e-6);
}

TEST(MakeOptimizer, RejectsBadSettingsByName) {
  OptimizerConfig c;
  c.kind = "rmsprop";
  EXPECT_NE(MakeOptimizer(c, 4).status().message().find("unknown kind 'rmsprop'"), std::string::npos);
  c.kind = "adam";
  c.lr = 0.0f;
  EXPECT_NE(MakeOptimizer(c, 4).status().message().find("lr"), std::string::npos);
  c.lr = 1e-3f;
  c.beta1 = 1.0f;
  EXPECT_FALSE(MakeOptimizer(c, 4).ok());
  c.beta1 = 0.5f;
  ASSERT_TRUE(MakeOptimizer(c, 4).ok());
  EXPECT_EQ((*MakeOptimizer(c, 4))->name(), "adam");
  c.kind = "sgd";
  EXPECT_EQ((*MakeOptimizer(c, 4))->name(), "sgd");
}

}  // namespace
}  // namespace gantry
