// RestoreState: an optimizer rebuilt from a saved state (as a resumed run does) takes
// exactly the steps the original would have taken.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/optim/optimizer.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::vector<float> Values(const Tensor& t) { return std::vector<float>(t.data(), t.data() + t.numel()); }

std::vector<std::vector<float>> SavedState(const Optimizer& opt) {
  std::vector<std::vector<float>> saved;
  for (const Tensor& t : opt.state()) saved.push_back(Values(t));
  return saved;
}

// Steps `opt` with gradient i of `grads` for i in [first, last).
void StepRange(Optimizer& opt, const Tensor& params, int first, int last) {
  for (int i = first; i < last; ++i) {
    const Tensor g = Tensor::FromVector(Shape{3}, {0.3f * i - 1.0f, 2.0f / (i + 1), -0.5f * i});
    opt.Step(CpuBackend(), params, g);
  }
}

class RestoreTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RestoreTest, ContinuesBitIdentically) {
  OptimizerConfig c;
  c.kind = GetParam();
  c.lr = 0.01f;
  auto straight = *MakeOptimizer(c, 3);
  const Tensor p_straight = Tensor::FromVector(Shape{3}, {1.0f, -2.0f, 0.5f});
  StepRange(*straight, p_straight, 0, 6);

  auto first = *MakeOptimizer(c, 3);
  const Tensor p = Tensor::FromVector(Shape{3}, {1.0f, -2.0f, 0.5f});
  StepRange(*first, p, 0, 4);
  auto second = *MakeOptimizer(c, 3);
  ASSERT_TRUE(second->RestoreState(SavedState(*first), first->steps_taken()).ok());
  EXPECT_EQ(second->steps_taken(), 4);
  StepRange(*second, p, 4, 6);

  EXPECT_EQ(Values(p), Values(p_straight));  // bit for bit
  EXPECT_EQ(SavedState(*second), SavedState(*straight));
  EXPECT_EQ(second->steps_taken(), straight->steps_taken());
}

INSTANTIATE_TEST_SUITE_P(Kinds, RestoreTest, ::testing::Values("adam", "sgd"));

TEST(Restore, RejectsAStateOfAnotherShapeAndKeepsItsOwn) {
  OptimizerConfig c;
  auto adam = *MakeOptimizer(c, 3);
  EXPECT_THAT(adam->RestoreState({{1, 2, 3}}, 1).message(), HasSubstr("saved state has 1 buffer(s), this optimizer has 2"));
  EXPECT_THAT(adam->RestoreState({{1, 2, 3}, {1, 2}}, 1).message(),
              HasSubstr("saved state buffer 1 holds 2 values, this optimizer's holds 3"));
  EXPECT_FALSE(adam->RestoreState({{1, 2, 3}, {1, 2, 3}}, -1).ok());
  EXPECT_EQ(adam->steps_taken(), 0);
  EXPECT_EQ(SavedState(*adam), (std::vector<std::vector<float>>{{0, 0, 0}, {0, 0, 0}}));
}

}  // namespace
}  // namespace gantry
