#include "worker/optim/loss_scaler.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

LossScaleConfig Dynamic(float init = 1024.0f, int64_t interval = 3) {
  LossScaleConfig c;
  c.mode = LossScaleMode::kDynamic;
  c.init_scale = init;
  c.growth_interval = interval;
  return c;
}

TEST(LossScaler, DefaultsAreGradScalers) {
  const LossScaleConfig c;
  EXPECT_EQ(c.init_scale, 65536.0f);
  EXPECT_EQ(c.growth_interval, 2000);
  EXPECT_EQ(c.growth_factor, 2.0f);
  EXPECT_EQ(c.backoff_factor, 0.5f);
  LossScaleConfig dynamic = c;
  dynamic.mode = LossScaleMode::kDynamic;
  LossScaler scaler(dynamic);
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_TRUE(scaler.checks_gradients());
}

TEST(LossScaler, DynamicGrowsAfterEachFullRunOfCleanSteps) {
  LossScaler s(Dynamic());
  EXPECT_TRUE(s.Update(true));
  EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_EQ(s.clean_streak(), 2);
  EXPECT_TRUE(s.Update(true));  // the third clean step grows the scale
  EXPECT_EQ(s.scale(), 2048.0f);
  EXPECT_EQ(s.clean_streak(), 0);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 4096.0f);
  EXPECT_EQ(s.skipped_steps(), 0);
}

TEST(LossScaler, DynamicBacksOffSkipsAndRestartsTheRunOnOverflow) {
  LossScaler s(Dynamic());
  EXPECT_TRUE(s.Update(true));
  EXPECT_TRUE(s.Update(true));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_EQ(s.clean_streak(), 0);
  EXPECT_EQ(s.skipped_steps(), 1);
  // Two clean steps no longer suffice: the run restarted at the skip.
  EXPECT_TRUE(s.Update(true));
  EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 512.0f);
  EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 1024.0f);
  // Consecutive overflows back off each time and are each counted.
  EXPECT_FALSE(s.Update(false));
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 256.0f);
  EXPECT_EQ(s.skipped_steps(), 3);
}

TEST(LossScaler, DynamicUsesTheConfiguredFactors) {
  LossScaleConfig c = Dynamic(100.0f, 1);
  c.growth_factor = 3.0f;
  c.backoff_factor = 0.25f;
  LossScaler s(c);
  s.Update(true);
  EXPECT_EQ(s.scale(), 300.0f);
  s.Update(false);
  EXPECT_EQ(s.scale(), 75.0f);
}

TEST(LossScaler, DynamicScaleStaysFiniteAndNormal) {
  LossScaler big(Dynamic(std::numeric_limits<float>::max() / 1.5f, 1));
  EXPECT_TRUE(big.Update(true));  // growing would overflow: the scale stays
  EXPECT_EQ(big.scale(), std::numeric_limits<float>::max() / 1.5f);
  EXPECT_EQ(big.clean_streak(), 0);
  LossScaler small(Dynamic(std::numeric_limits<float>::min() * 3, 1));
  EXPECT_FALSE(small.Update(false));
  EXPECT_EQ(small.scale(), std::numeric_limits<float>::min() * 1.5f);
  EXPECT_FALSE(small.Update(false));
  EXPECT_EQ(small.scale(), std::numeric_limits<float>::min());  // floor: 1/scale stays finite
}

TEST(LossScaler, StaticKeepsItsScaleAndStillSkipsNonFiniteSteps) {
  LossScaleConfig c;
  c.mode = LossScaleMode::kStatic;
  c.init_scale = 128.0f;
  c.growth_interval = 1;
  LossScaler s(c);
  EXPECT_TRUE(s.checks_gradients());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(s.Update(true));
  EXPECT_EQ(s.scale(), 128.0f);
  EXPECT_FALSE(s.Update(false));
  EXPECT_EQ(s.scale(), 128.0f);
  EXPECT_EQ(s.skipped_steps(), 1);
}

TEST(LossScaler, NoneScalesByOneAndNeverSkips) {
  LossScaler s(LossScaleConfig{});
  EXPECT_EQ(s.scale(), 1.0f);
  EXPECT_FALSE(s.checks_gradients());
  EXPECT_TRUE(s.Update(false));
  EXPECT_EQ(s.skipped_steps(), 0);
  EXPECT_EQ(s.scale(), 1.0f);
}

TEST(LossScaler, InvalidConfigurationsNameTheSetting) {
  LossScaleConfig c = Dynamic();
  c.init_scale = 0;
  EXPECT_THAT(ValidateLossScaleConfig(c).message(), HasSubstr("--loss-scale-init: 0 is not a positive finite"));
  c.mode = LossScaleMode::kStatic;
  c.init_scale = std::numeric_limits<float>::infinity();
  EXPECT_THAT(ValidateLossScaleConfig(c).message(), HasSubstr("--loss-scale: inf is not a positive finite"));
  c = Dynamic();
  c.growth_interval = 0;
  EXPECT_THAT(ValidateLossScaleConfig(c).message(), HasSubstr("--loss-scale-growth-interval"));
  c = Dynamic();
  c.growth_factor = 1.0f;
  EXPECT_THAT(ValidateLossScaleConfig(c).message(), HasSubstr("--loss-scale-growth-factor: 1 must be"));
  c = Dynamic();
  c.backoff_factor = 1.0f;
  EXPECT_THAT(ValidateLossScaleConfig(c).message(), HasSubstr("--loss-scale-backoff-factor: 1 must lie"));
  EXPECT_TRUE(ValidateLossScaleConfig(Dynamic()).ok());
}

TEST(LossScaler, RestoredStateContinuesTheSameWay) {
  LossScaler a(Dynamic());
  for (bool finite : {true, false, true, true}) a.Update(finite);
  LossScaler b(Dynamic());
  ASSERT_TRUE(b.Restore(a.state()).ok());
  EXPECT_EQ(b.state(), a.state());
  for (bool finite : {true, true, false, true}) EXPECT_EQ(b.Update(finite), a.Update(finite));
  EXPECT_EQ(b.state(), a.state());
  EXPECT_EQ(b.scale(), a.scale());
}

TEST(LossScaler, RestoreRefusesAStateOfOtherSettings) {
  LossScaler none(LossScaleConfig{});
  EXPECT_THAT(none.Restore({1024.0f, 0, 0}).message(), HasSubstr("loss scaler (none): cannot take the saved scale 1024"));
  LossScaleConfig fixed = Dynamic(8.0f);
  fixed.mode = LossScaleMode::kStatic;
  LossScaler stat(fixed);
  EXPECT_FALSE(stat.Restore({16.0f, 0, 0}).ok());
  EXPECT_TRUE(stat.Restore({8.0f, 0, 2}).ok());
  LossScaler dyn(Dynamic());
  EXPECT_FALSE(dyn.Restore({-1.0f, 0, 0}).ok());
  EXPECT_FALSE(dyn.Restore({std::numeric_limits<float>::infinity(), 0, 0}).ok());
  EXPECT_EQ(dyn.scale(), 1024.0f);
}

}  // namespace
}  // namespace gantry
