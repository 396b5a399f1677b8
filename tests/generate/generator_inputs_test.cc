#include "worker/generate/generator_inputs.h"

#include <stdlib.h>

#include <cmath>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/formats/npy.h"
#include "worker/models/dcgan.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

class GeneratorInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/gantry_inputs_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Npy(const std::string& name, const std::vector<int64_t>& shape, float value) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> data(n);
    for (int64_t i = 0; i < n; ++i) data[i] = value + 0.001f * static_cast<float>(i);
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteNpy(path, data.data(), shape).ok());
    return path;
  }
  static std::vector<float> Row(const Tensor& t, int64_t i) {
    return std::vector<float>(t.data() + i * t.dim(1), t.data() + (i + 1) * t.dim(1));
  }
  absl::Status Refusal(const LatentRequest& r) { return LatentInputs(model_, r, 1000).status(); }

  Dcgan model_{DcganConfig{}};
  std::string dir_;
};

TEST_F(GeneratorInputs, SeededRowsAreTheModelsOwnDrawFromThatSeed) {
  const absl::StatusOr<Tensor> rows = LatentInputs(model_, {.count = 5, .seed = 3}, 1000);
  ASSERT_TRUE(rows.ok()) << rows.status();
  Rng rng(3);
  const Tensor want = model_.SampleInputs(rng, 5);
  EXPECT_EQ(rows->shape().dims(), (std::vector<int64_t>{5, 100}));
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(Row(*rows, i), Row(want, i));
}

TEST_F(GeneratorInputs, TheWalkRunsOnTheGreatCircleFromRowAToRowB) {
  const Tensor seeded = *LatentInputs(model_, {.count = 8, .seed = 4}, 1000);
  const absl::StatusOr<Tensor> walk = LatentInputs(model_, {.seed = 4, .interpolate = "6,1", .steps = 5}, 1000);
  ASSERT_TRUE(walk.ok()) << walk.status();
  ASSERT_EQ(walk->dim(0), 5);
  EXPECT_EQ(Row(*walk, 0), Row(seeded, 6));
  EXPECT_EQ(Row(*walk, 4), Row(seeded, 1));
  auto norm = [](const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s);
  };
  // Midway a straight line between two independent Gaussian vectors shrinks to about
  // 1/sqrt(2) of their norm; the great circle keeps it between theirs.
  const double a = norm(Row(seeded, 6)), b = norm(Row(seeded, 1)), mid = norm(Row(*walk, 2));
  EXPECT_GT(mid, 0.95 * std::min(a, b));
  EXPECT_LT(mid, 1.05 * std::max(a, b));
}

TEST_F(GeneratorInputs, NoiseFilesGiveTheirRowsAndAWalkBetweenThem) {
  const std::string file = Npy("z.npy", {3, 100}, 0.5f);
  const absl::StatusOr<Tensor> rows = LatentInputs(model_, {.noise_file = file}, 1000);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dim(0), 3);
  EXPECT_FLOAT_EQ(rows->data()[101], 0.601f);  // row 1, column 1: element 101 of the file
  const absl::StatusOr<Tensor> walk = LatentInputs(model_, {.noise_file = file, .interpolate = "0,2", .steps = 3}, 9);
  ASSERT_TRUE(walk.ok()) << walk.status();
  EXPECT_EQ(Row(*walk, 2), Row(*rows, 2));
}

TEST_F(GeneratorInputs, BadRequestsAreRefusedNamingTheFlagAndTheFix) {
  EXPECT_THAT(Refusal({}).message(), HasSubstr("--count: say how many"));
  EXPECT_THAT(Refusal({.count = 0}).message(), HasSubstr("between 1 and 1000"));
  EXPECT_THAT(Refusal({.count = 1001}).message(), HasSubstr("between 1 and 1000"));
  EXPECT_THAT(Refusal({.count = -3}).message(), HasSubstr("between 1 and 1000"));
  EXPECT_THAT(Refusal({.steps = 4}).message(), HasSubstr("--steps is the length of an --interpolate walk"));
  EXPECT_THAT(Refusal({.interpolate = "1,2", .steps = 1}).message(), HasSubstr("--steps 2 or more"));
  EXPECT_THAT(Refusal({.count = 3, .interpolate = "1,2", .steps = 3}).message(), HasSubstr("the walk has --steps"));
  EXPECT_THAT(Refusal({.interpolate = "1;2", .steps = 3}).message(), HasSubstr("A,B"));
  EXPECT_THAT(Refusal({.interpolate = "1,-2", .steps = 3}).message(), HasSubstr("A,B"));
  const std::string wide = Npy("wide.npy", {2, 64}, 0);
  EXPECT_THAT(Refusal({.noise_file = wide}).message(), HasSubstr("give [N, 100]"));
  const std::string two = Npy("two.npy", {2, 100}, 0);
  EXPECT_THAT(Refusal({.count = 3, .noise_file = two}).message(), HasSubstr("holds 2 rows"));
  EXPECT_THAT(Refusal({.noise_file = two, .interpolate = "0,5", .steps = 3}).message(), HasSubstr("row 5 is past"));
  EXPECT_THAT(Refusal({.noise_file = dir_ + "/none.npy"}).message(), HasSubstr("none.npy"));
  // Issue 45, item 7: the last row of INT64_MAX is past the draw, not "row -9223372036854775808".
  const std::string far(Refusal({.interpolate = "0,9223372036854775807", .steps = 3}).message());
  EXPECT_THAT(far, HasSubstr("row 9223372036854775807 is past the seeded draw's rows 0 to 999"));
  EXPECT_THAT(far, ::testing::Not(HasSubstr("-9223372036854775808")));
  EXPECT_THAT(Refusal({.interpolate = "0,9223372036854775808", .steps = 3}).message(),
              HasSubstr("'0,9223372036854775808': give two latent rows as A,B"));
}

TEST_F(GeneratorInputs, ConditionFilesMustHoldFramesOfTheModelsSide) {
  const absl::StatusOr<Tensor> one = ConditionInputs(32, {.condition_file = Npy("c.npy", {4, 32, 32}, 0)}, 10);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape().dims(), (std::vector<int64_t>{1, 4, 32, 32}));
  EXPECT_THAT(ConditionInputs(32, {.condition_file = Npy("big.npy", {2, 4, 64, 64}, 0)}, 10).status().message(),
              HasSubstr("the model takes [N, 4, 32, 32]"));
  EXPECT_THAT(ConditionInputs(32, {}, 10).status().message(), HasSubstr("give --condition FILE.npy or --case"));
  // Issue 45, item 9: as --noise-file, NaN and inf frames are refused by value.
  int n = 0;
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    const std::string path = Npy("bad" + std::to_string(n++) + ".npy", {4, 32, 32}, bad);
    EXPECT_THAT(ConditionInputs(32, {.condition_file = path}, 10).status().message(),
                HasSubstr("--condition " + path + " holds "));
  }
  EXPECT_THAT(ConditionInputs(32, {.condition_file = "a.npy", .case_dir = "b"}, 10).status().message(),
              HasSubstr("give --condition FILE.npy or --case"));
}

}  // namespace
}  // namespace gantry
