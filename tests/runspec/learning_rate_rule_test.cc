// The learning-rate rule's arithmetic and its settings (--lr-scaling, --base-batch-size,
// --warmup-steps, --warmup-start, --d-lr-ratio) and the quality target's (--target-fd, ...).
#include "runspec/learning_rate_rule.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(LearningRateRule, ScalesFromTheBaseBatch) {
  LearningRateRule rule;
  rule.base_batch_size = 64;
  EXPECT_DOUBLE_EQ(ScaledLearningRate(1e-4, rule, 512), 1e-4);  // none
  rule.scaling = LrScaling::kLinear;
  EXPECT_DOUBLE_EQ(ScaledLearningRate(1e-4, rule, 512), 8e-4);
  EXPECT_DOUBLE_EQ(ScaledLearningRate(1e-4, rule, 32), 5e-5);
  rule.scaling = LrScaling::kSqrt;
  EXPECT_NEAR(ScaledLearningRate(1e-4, rule, 512), 2.8284271e-4, 1e-10);
  EXPECT_DOUBLE_EQ(ScaledLearningRate(1e-4, rule, 64), 1e-4);
}

TEST(LearningRateRule, WarmsUpLinearlyThenHolds) {
  LearningRateRule rule;
  rule.warmup_steps = 10;
  rule.warmup_start = 0.1;
  EXPECT_DOUBLE_EQ(WarmedUpRate(1.0, rule, 0), 0.1);
  EXPECT_DOUBLE_EQ(WarmedUpRate(1.0, rule, 5), 0.55);
  EXPECT_DOUBLE_EQ(WarmedUpRate(1.0, rule, 10), 1.0);
  EXPECT_DOUBLE_EQ(WarmedUpRate(1.0, rule, 1000), 1.0);
  rule.warmup_steps = 0;
  EXPECT_DOUBLE_EQ(WarmedUpRate(1.0, rule, 0), 1.0);
}

TEST(LearningRateRule, DescribesItself) {
  LearningRateRule rule;
  rule.scaling = LrScaling::kLinear;
  rule.warmup_steps = 20;
  EXPECT_EQ(DescribeLearningRate(1e-4, rule, 512),
            "0.0008 (linear scaling of 0.0001 from batch 64), warm-up over 20 steps from 10 %");
  EXPECT_EQ(DescribeLearningRate(1e-4, LearningRateRule{}, 512), "0.0001");
  rule.d_ratio = 4;
  EXPECT_EQ(DescribeLearningRate(1e-4, rule, 512),
            "0.0008 (linear scaling of 0.0001 from batch 64), warm-up over 20 steps from 10 %; discriminator 4x: 0.0032");
}

TEST(LearningRateRule, TheDiscriminatorsRateIsAMultipleOfTheScaledRate) {
  LearningRateRule rule;
  EXPECT_DOUBLE_EQ(DiscriminatorRate(3e-4, rule), 3e-4);  // default: the same rate
  rule.d_ratio = 0.25;
  EXPECT_DOUBLE_EQ(DiscriminatorRate(4e-4, rule), 1e-4);
}

TEST(LearningRateSettings, ParseAndRefuseByName) {
  absl::StatusOr<TrainConfig> c = ResolveTrainConfig(
      {{"lr-scaling", "sqrt"}, {"base-batch-size", "128"}, {"warmup-steps", "50"}, {"warmup-start", "0.5"},
       {"d-lr-ratio", "4"}, {"g-ema", "0.999"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rate_rule.scaling, LrScaling::kSqrt);
  EXPECT_EQ(c->rate_rule.base_batch_size, 128);
  EXPECT_EQ(c->rate_rule.warmup_steps, 50);
  EXPECT_DOUBLE_EQ(c->rate_rule.warmup_start, 0.5);
  EXPECT_DOUBLE_EQ(c->rate_rule.d_ratio, 4);
  EXPECT_DOUBLE_EQ(c->g_ema, 0.999);
  EXPECT_DOUBLE_EQ(ResolveTrainConfig({})->rate_rule.d_ratio, 1);
  EXPECT_DOUBLE_EQ(ResolveTrainConfig({})->g_ema, 0);  // no average unless asked
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"lr-scaling", "quadratic"}, {"base-batch-size", "0"}, {"base-batch-size", "99999999999"},
           {"warmup-steps", "-1"}, {"warmup-start", "0"}, {"warmup-start", "1.5"}, {"warmup-start", "nan"},
           {"d-lr-ratio", "0"}, {"d-lr-ratio", "-2"}, {"d-lr-ratio", "1000"}, {"g-ema", "1"}, {"g-ema", "-0.1"},
           {"g-ema", "nan"}}) {
    const absl::StatusOr<TrainConfig> bad = ResolveTrainConfig({{name, value}});
    ASSERT_FALSE(bad.ok()) << name << "=" << value;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--" + name)) << value;
  }
}

// Issue 45, item 8: each network's rate after scaling, at every batch size of the sweep,
// within --lr's own range, the refusal naming the flags that made it.
TEST(LearningRateSettings, EffectiveRatesOutOfRangeAreRefusedNamingTheirFlags) {
  const auto refusal = [](const RawSettings& settings) {
    const absl::StatusOr<TrainConfig> c = ResolveTrainConfig(settings);
    return c.ok() ? std::string("accepted") : std::string(c.status().message());
  };
  // 0.01 x 8192/64 = 1.28 is fine at 8192, but D's 1280 with --d-lr-ratio 1000 is not.
  EXPECT_EQ(refusal({{"lr", "0.01"}, {"lr-scaling", "linear"}, {"batch-size", "64,8192"}}), "accepted");
  const std::string d =
      refusal({{"lr", "0.01"}, {"lr-scaling", "linear"}, {"batch-size", "64,8192"}, {"d-lr-ratio", "99"}});
  EXPECT_THAT(d, HasSubstr("the discriminator's learning rate at global batch 8192 would be 126.72, outside "
                           "[1e-12, 10]: made by --lr 0.01, --lr-scaling linear from --base-batch-size 64 (x128), "
                           "--d-lr-ratio 99"));
  EXPECT_THAT(refusal({{"lr", "8"}, {"lr-scaling", "sqrt"}, {"batch-size", "256"}}),
              HasSubstr("the generator's learning rate at global batch 256 would be 16"));
  // Too small: --d-lr-ratio 1e-300 (which a float would make 0) and a warm-up's first rate.
  EXPECT_THAT(refusal({{"d-lr-ratio", "1e-300"}}),
              HasSubstr("discriminator's learning rate at global batch 64 would be 1e-304, outside [1e-12, 10]: "
                        "made by --lr 0.0001, --d-lr-ratio 1e-300"));
  EXPECT_THAT(refusal({{"lr", "1e-12"}, {"warmup-steps", "5"}, {"warmup-start", "0.5"}}),
              HasSubstr("generator's first warm-up learning rate at global batch 64 would be 5e-13, outside [1e-12, "
                        "10]: made by --lr 1e-12, --warmup-start 0.5 (with --warmup-steps)"));
  EXPECT_THAT(refusal({{"lr", "1e-11"}, {"lr-scaling", "linear"}, {"base-batch-size", "4096"}, {"batch-size", "8"}}),
              HasSubstr("--lr-scaling linear from --base-batch-size 4096 (x0.00195312)"));
}

TEST(QualityTargetSettings, ATargetMustBeOneTheRunScores) {
  absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{"target-fd", "40"}, {"stop-at-target", "true"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->target.fd, 40);
  EXPECT_TRUE(c->target.stop);
  const std::vector<std::pair<RawSettings, std::string>> refused = {
      {{{"stop-at-target", "true"}}, "--stop-at-target needs a target"},
      {{{"target-fd", "40"}, {"quality", "off"}}, "--quality is off"},
      {{{"target-fd", "40"}, {"dataset", "flow"}, {"model", "pix2pix"}}, "use --target-rel-l2"},
      {{{"target-rel-l2", "0.1"}}, "--dataset flow"},
      {{{"target-fd", "-3"}}, "--target-fd"},
      {{{"target-fd", "inf"}}, "--target-fd"},
  };
  for (const auto& [settings, message] : refused) {
    const absl::StatusOr<TrainConfig> bad = ResolveTrainConfig(settings);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(message));
  }
}

}  // namespace
}  // namespace gantry
