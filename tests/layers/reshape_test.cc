#include "worker/layers/reshape.h"

#include "gtest/gtest.h"
#include "tests/testing/gradient_check.h"

namespace gantry {
namespace {

using ::gantry::testing::RandomTensor;

TEST(ReshapeTest, KeepsTheBatchAndSharesStorage) {
  Reshape layer(Shape{1, 4, 4});
  EXPECT_EQ(layer.name(), "reshape");
  EXPECT_EQ(layer.OutputShape(Shape{3, 16}), (Shape{3, 1, 4, 4}));
  const Tensor x = RandomTensor(Shape{3, 16}, 1);
  ActivationCache cache;
  const Tensor y = layer.Forward(Context{}, x, &cache);
  EXPECT_EQ(y.shape(), (Shape{3, 1, 4, 4}));
  EXPECT_TRUE(y.SharesStorageWith(x));
  EXPECT_EQ(y.at(17), x.at(17));

  const Tensor dy = RandomTensor(y.shape(), 2);
  const Tensor dx = layer.Backward(Context{}, dy, cache, true);
  EXPECT_EQ(dx.shape(), (Shape{3, 16}));
  EXPECT_TRUE(dx.SharesStorageWith(dy));
  EXPECT_FALSE(layer.Backward(Context{}, dy, cache, false).defined());
}

TEST(ReshapeTest, FlattenCollapsesAllButTheBatch) {
  Flatten layer;
  EXPECT_EQ(layer.name(), "flatten");
  EXPECT_EQ(layer.OutputShape(Shape{2, 3, 4, 5}), (Shape{2, 60}));
  const Tensor x = RandomTensor(Shape{2, 3, 4, 5}, 3);
  ActivationCache cache;
  const Tensor y = layer.Forward(Context{}, x, &cache);
  EXPECT_EQ(y.shape(), (Shape{2, 60}));
  EXPECT_TRUE(y.SharesStorageWith(x));
  const Tensor dx = layer.Backward(Context{}, RandomTensor(Shape{2, 60}, 4), cache, true);
  EXPECT_EQ(dx.shape(), (Shape{2, 3, 4, 5}));
}

TEST(ReshapeDeathTest, RejectsAMismatchedSampleSize) {
  Reshape layer(Shape{1, 4, 4});
  EXPECT_DEATH(layer.OutputShape(Shape{3, 15}), "cannot reshape");
}

}  // namespace
}  // namespace gantry
