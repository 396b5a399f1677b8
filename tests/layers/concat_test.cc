#include "worker/layers/concat.h"

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::CheckGradientOf;
using ::gantry::testing::GradCheckOptions;
using ::gantry::testing::RandomTensor;

TEST(ConcatChannelsTest, ForwardStacksChannelsPerSample) {
  const Tensor a = RandomTensor(Shape{2, 2, 3, 3}, 1), b = RandomTensor(Shape{2, 1, 3, 3}, 2);
  const Tensor y = ConcatChannels().Forward(Context{}, a, b);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3, 3}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t ch = 0; ch < 3; ++ch) {
      for (int64_t k = 0; k < 9; ++k) {
        const float expected = ch < 2 ? a.at((i * 2 + ch) * 9 + k) : b.at((i * 1 + ch - 2) * 9 + k);
        EXPECT_EQ(y.at((i * 3 + ch) * 9 + k), expected) << i << "," << ch << "," << k;
      }
    }
  }
}

TEST(ConcatChannelsTest, BackwardSplitsWhatForwardJoined) {
  const Tensor a = RandomTensor(Shape{3, 4, 2, 5}, 3), b = RandomTensor(Shape{3, 2, 2, 5}, 4);
  const ConcatChannels concat;
  const auto [da, db] = concat.Backward(Context{}, concat.Forward(Context{}, a, b), 4);
  ASSERT_EQ(da.shape(), a.shape());
  ASSERT_EQ(db.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(da.at(i), a.at(i));
  for (int64_t i = 0; i < b.numel(); ++i) EXPECT_EQ(db.at(i), b.at(i));
}

TEST(ConcatChannelsTest, GradientsMatchFiniteDifferences) {
  const Tensor a = RandomTensor(Shape{2, 3, 2, 2}, 5), b = RandomTensor(Shape{2, 2, 2, 2}, 6);
  const Tensor w = RandomTensor(Shape{2, 5, 2, 2}, 7);
  const ConcatChannels concat;
  auto loss = [&] {
    const Tensor y = concat.Forward(Context{}, a, b);
    double s = 0.0;
    for (int64_t i = 0; i < y.numel(); ++i) s += double{w.at(i)} * y.at(i);
    return s;
  };
  const auto [da, db] = concat.Backward(Context{}, w, 3);
  CheckGradientOf(loss, a, da, "a", GradCheckOptions{});
  CheckGradientOf(loss, b, db, "b", GradCheckOptions{});
}

TEST(ConcatChannelsDeathTest, RejectsMismatchedSpatialSizes) {
  const Tensor a = Tensor::Zeros(Shape{1, 2, 3, 3}), b = Tensor::Zeros(Shape{1, 2, 3, 4});
  EXPECT_DEATH(ConcatChannels().Forward(Context{}, a, b), "concat of");
}

}  // namespace
}  // namespace gantry
