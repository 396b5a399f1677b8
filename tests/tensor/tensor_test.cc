#include "worker/tensor/tensor.h"

#include "gtest/gtest.h"
#include "worker/tensor/random.h"

namespace gantry {
namespace {

TEST(Tensor, ZerosAreAlignedAndZero) {
  const Tensor t = Tensor::Zeros(Shape{3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.at(i), 0.0f);
  EXPECT_EQ(t.shape().ToString(), "[3,5]");
}

TEST(Tensor, ViewsShareStorage) {
  const Tensor t = Tensor::FromVector(Shape{2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor row1 = t.Slice(1, 2);
  EXPECT_EQ(row1.shape(), (Shape{1, 3}));
  EXPECT_EQ(row1.at(0), 3.0f);
  row1.data()[2] = 42.0f;
  EXPECT_EQ(t.at(5), 42.0f);
  const Tensor flat = t.Reshaped(Shape{6});
  EXPECT_TRUE(flat.SharesStorageWith(t));
  const Tensor mid = flat.ViewAt(2, Shape{2});
  EXPECT_EQ(mid.at(0), 2.0f);
  EXPECT_EQ(mid.at(1), 3.0f);
}

TEST(Tensor, CloneIsIndependent) {
  const Tensor t = Tensor::FromVector(Shape{2}, {1, 2});
  const Tensor c = t.Clone();
  c.Fill(9.0f);
  EXPECT_EQ(t.at(0), 1.0f);
  EXPECT_FALSE(c.SharesStorageWith(t));
}

TEST(Tensor, Bf16Storage) {
  const Tensor t = Tensor::Zeros(Shape{4}, DType::kBF16);
  EXPECT_EQ(t.nbytes(), 8u);
  t.Fill(1.5f);
  EXPECT_EQ(t.data_bf16()[3].ToFloat(), 1.5f);
}

TEST(Tensor, CopyFromTheSameElementsIsANoOpButAnotherViewOfTheStorageIsCopied) {
  const Tensor t = Tensor::FromVector(Shape{4}, {1, 2, 3, 4});
  t.CopyFrom(t.On(Device::kCpu));  // the staged-value write-back of a host tensor
  EXPECT_EQ(t.at(0), 1.0f);
  EXPECT_EQ(t.at(3), 4.0f);
  t.ViewAt(0, Shape{2}).CopyFrom(t.ViewAt(2, Shape{2}));
  EXPECT_EQ(t.at(0), 3.0f);
  EXPECT_EQ(t.at(1), 4.0f);
}

TEST(TensorDeathTest, ViewOutOfRangeDies) {
  const Tensor t = Tensor::Zeros(Shape{4});
  EXPECT_DEATH(t.ViewAt(2, Shape{3}), "outside");
  EXPECT_DEATH(t.Reshaped(Shape{5}), "cannot reshape");
}

TEST(Rng, IsDeterministicAndRoughlyNormal) {
  Rng a(5), b(5);
  EXPECT_EQ(a.NextU64(), b.NextU64());
  Rng r(11);
  double sum = 0, sumsq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = r.Normal();
    sum += x;
    sumsq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sumsq / n, 1.0, 0.02);
  EXPECT_NE(HashUniform(1, 2), HashUniform(2, 2));
}

}  // namespace
}  // namespace gantry
