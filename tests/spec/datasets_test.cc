#include "spec/datasets.h"

#include "gtest/gtest.h"

namespace gantry {
namespace {

TEST(DefaultDataDir, OnlyFashionMnistHasOne) {
  EXPECT_EQ(DefaultDataDir("fashion-mnist"), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(DefaultDataDir("mnist"), "");
}

}  // namespace
}  // namespace gantry
