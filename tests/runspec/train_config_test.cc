#include "runspec/train_config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(TrainConfig, DefaultsAreThePapers) {
  const auto c = ResolveTrainConfig({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dataset, "fashion-mnist");
  EXPECT_EQ(c->batch_sizes, std::vector<int64_t>{64});
  EXPECT_FLOAT_EQ(c->optimizer.lr, 1e-4f);
  EXPECT_EQ(c->optimizer.kind, "adam");
  EXPECT_FLOAT_EQ(c->dcgan.bn_eps, 1e-3f);
  EXPECT_EQ(EffectiveDataDir(*c), "/usr/share/datasets/fashion-mnist");
}

TEST(TrainConfig, ParsesEverySetting) {
  const auto c = ResolveTrainConfig({{"dataset", "mnist"},   {"data-dir", "/d"},   {"epochs", "3"},
                                     {"batch-size", "64, 128,256"}, {"optimizer", "sgd"}, {"lr", "0.01"},
                                     {"momentum", "0.5"},    {"seed", "42"},       {"max-steps", "10"},
                                     {"init", "normal"},     {"dropout", "0"},     {"out", "/tmp/r"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{64, 128, 256}));
  EXPECT_EQ(c->epochs, 3);
  EXPECT_EQ(c->optimizer.kind, "sgd");
  EXPECT_FLOAT_EQ(c->optimizer.momentum, 0.5f);
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->init, InitScheme::kNormal002);
  EXPECT_EQ(EffectiveDataDir(*c), "/d");
}

TEST(TrainConfig, Pix2pixSettingsAndDefaults) {
  const auto c = ResolveTrainConfig({{"model", "pix2pix"}, {"image-size", "64"}, {"ngf", "16"}, {"ndf", "8"},
                                     {"norm", "instance"}, {"l1-weight", "50"}, {"horizon", "3"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pix2pix.image_size, 64);
  EXPECT_EQ(c->pix2pix.ngf, 16);
  EXPECT_EQ(c->pix2pix.ndf, 8);
  EXPECT_EQ(c->pix2pix.norm, NormKind::kInstance);
  EXPECT_FLOAT_EQ(c->pix2pix.l1_weight, 50.0f);
  EXPECT_EQ(c->pix2pix.horizon, 3);
  // Pix2Pix's own defaults where the run does not say: Adam 2e-4, N(0, 0.02).
  EXPECT_FLOAT_EQ(c->optimizer.lr, 2e-4f);
  EXPECT_EQ(c->init, InitScheme::kNormal002);
  const auto given = ResolveTrainConfig({{"model", "pix2pix"}, {"lr", "0.001"}, {"init", "glorot"}});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_FLOAT_EQ(given->optimizer.lr, 1e-3f);
  EXPECT_EQ(given->init, InitScheme::kGlorotUniform);
  const auto defaults = ResolveTrainConfig({{"model", "pix2pix"}});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->pix2pix.image_size, 256);
  EXPECT_EQ(defaults->pix2pix.ngf, 64);
  EXPECT_FLOAT_EQ(defaults->pix2pix.l1_weight, 100.0f);
  EXPECT_EQ(defaults->pix2pix.norm, NormKind::kBatch);
  // A pix2pix run predicts the change unless it says otherwise; the network API keeps
  // the sources' frame-predicting generator.
  EXPECT_EQ(defaults->pix2pix.predict, NextFramePrediction::kDelta);
  EXPECT_EQ(ResolveTrainConfig({{"model", "pix2pix"}, {"predict", "frame"}})->pix2pix.predict,
            NextFramePrediction::kFrame);
  EXPECT_EQ(ResolveTrainConfig({{"model", "pix2pix"}, {"predict", "delta"}})->pix2pix.predict,
            NextFramePrediction::kDelta);
  EXPECT_EQ(Pix2pixConfig{}.predict, NextFramePrediction::kFrame);
  EXPECT_STREQ(NextFramePredictionName(NextFramePrediction::kDelta), "delta");
  EXPECT_STREQ(NextFramePredictionName(NextFramePrediction::kFrame), "frame");
  EXPECT_FLOAT_EQ(defaults->pix2pix.input_noise, 0.0f);
  EXPECT_FLOAT_EQ(ResolveTrainConfig({{"model", "pix2pix"}, {"input-noise", "0.003"}})->pix2pix.input_noise, 0.003f);
  EXPECT_THAT(ResolveTrainConfig({{"input-noise", "-1"}}).status().message(), HasSubstr("--input-noise"));
  // The DCGAN keeps its own.
  EXPECT_FLOAT_EQ(ResolveTrainConfig({})->optimizer.lr, 1e-4f);
}

// --unroll and its companions: next-frame flow runs only; the companions need M >= 2.
TEST(TrainConfig, UnrollSettingsParseAndAreRefusedWhereTheyDoNothing) {
  const RawSettings flow = {{"model", "pix2pix"}, {"dataset", "flow"}};
  auto with = [&](RawSettings extra) {
    RawSettings s = flow;
    s.insert(extra.begin(), extra.end());
    return ResolveTrainConfig(s);
  };
  EXPECT_EQ(ResolveTrainConfig(flow)->pix2pix.unroll, UnrollConfig{});
  const absl::StatusOr<TrainConfig> c =
      with({{"unroll", "8"}, {"unroll-loss", "last"}, {"unroll-curriculum", "3"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pix2pix.unroll.steps, 8);
  EXPECT_EQ(c->pix2pix.unroll.loss, UnrollLoss::kLast);
  EXPECT_EQ(c->pix2pix.unroll.curriculum_epochs, 3);
  EXPECT_TRUE(with({{"unroll", "4"}, {"pushforward", "true"}})->pix2pix.unroll.pushforward);
  EXPECT_TRUE(with({{"unroll", "1"}, {"pushforward", "false"}}).ok());  // a switch left off asks for nothing
  EXPECT_THAT(with({{"unroll", "0"}}).status().message(), HasSubstr("--unroll"));
  EXPECT_THAT(with({{"unroll", "65"}}).status().message(), HasSubstr("--unroll"));
  EXPECT_THAT(with({{"unroll-loss", "first"}}).status().message(), HasSubstr("--unroll-loss"));
  EXPECT_THAT(with({{"pushforward", "true"}}).status().message(),
              HasSubstr("--pushforward applies to unrolled training; give --unroll M with M >= 2"));
  EXPECT_THAT(with({{"unroll-curriculum", "2"}}).status().message(), HasSubstr("--unroll-curriculum applies"));
  EXPECT_THAT(with({{"unroll", "3"}, {"pushforward", "true"}, {"unroll-loss", "every"}}).status().message(),
              HasSubstr("--pushforward trains on the last step's loss only"));
  EXPECT_THAT(ResolveTrainConfig({{"unroll", "3"}}).status().message(),
              HasSubstr("(--model pix2pix --dataset flow), not --model dcgan --dataset "));
  EXPECT_STREQ(UnrollLossName(UnrollLoss::kLast), "last");
  EXPECT_STREQ(UnrollLossName(UnrollLoss::kEvery), "every");
  UnrollConfig curriculum{.steps = 4, .curriculum_epochs = 3};
  EXPECT_EQ(curriculum.StepsAt(0), 1);
  EXPECT_EQ(curriculum.StepsAt(2), 1);
  EXPECT_EQ(curriculum.StepsAt(3), 2);
  EXPECT_EQ(curriculum.StepsAt(100), 4);
  EXPECT_EQ(UnrollConfig{.steps = 4}.StepsAt(0), 4);
  EXPECT_TRUE((UnrollConfig{.steps = 3}).CarriesLoss(1, 3));
  EXPECT_FALSE((UnrollConfig{.steps = 3, .loss = UnrollLoss::kLast}).CarriesLoss(1, 3));
  EXPECT_FALSE((UnrollConfig{.steps = 3, .pushforward = true}).CarriesLoss(2, 3));
  EXPECT_TRUE((UnrollConfig{.steps = 3, .pushforward = true}).CarriesLoss(3, 3));
}

TEST(TrainConfig, ImageSizesTheUNetCannotTakeNameTheFix) {
  const absl::Status s = ResolveTrainConfig({{"model", "pix2pix"}, {"image-size", "100"}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--image-size: bad value '100'"));
  EXPECT_THAT(s.message(), HasSubstr("power of two >= 32"));
  EXPECT_THAT(s.message(), HasSubstr("use 64 or 128"));
  EXPECT_THAT(ResolveTrainConfig({{"image-size", "16"}}).status().message(), HasSubstr("use 32"));
  EXPECT_THAT(ResolveTrainConfig({{"horizon", "0"}}).status().message(), HasSubstr("--horizon"));
  EXPECT_THAT(ResolveTrainConfig({{"norm", "layer"}}).status().message(), HasSubstr("batch, instance"));
  EXPECT_THAT(ResolveTrainConfig({{"predict", "next"}}).status().message(), HasSubstr("delta, frame"));
  EXPECT_THAT(ResolveTrainConfig({{"ngf", "0"}}).status().message(), HasSubstr("--ngf"));
}

TEST(TrainConfig, FlowIsADataset) {
  absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{"dataset", "flow"}, {"data-dir", "/d"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dataset, "flow");
}

TEST(TrainConfig, BadValuesNameTheSetting) {
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "0"}}).status().message(), HasSubstr("--batch-size: bad value '0'"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,x"}}).status().message(), HasSubstr("--batch-size"));
  EXPECT_THAT(ResolveTrainConfig({{"epochs", "-1"}}).status().message(), HasSubstr("--epochs"));
  EXPECT_THAT(ResolveTrainConfig({{"lr", "nan"}}).status().message(), HasSubstr("--lr"));
  EXPECT_THAT(ResolveTrainConfig({{"dataset", "cifar"}}).status().message(),
              HasSubstr("one of mnist, fashion-mnist"));
  EXPECT_THAT(ResolveTrainConfig({{"nope", "1"}}).status().message(), HasSubstr("unknown setting 'nope'"));
}

TEST(TrainConfig, BatchSizeListsHaveNoEmptyOrRepeatedEntries) {
  // A sweep trains each batch size once; an empty entry is a typo, not "skip".
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,64"}}).status().message(),
              HasSubstr("--batch-size: bad value '64,64' (64 appears twice"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,,128"}}).status().message(),
              HasSubstr("--batch-size: bad value '64,,128' (entry 2 is empty; positive integers"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", ""}}).status().message(), HasSubstr("--batch-size: bad value ''"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,"}}).status().message(), HasSubstr("--batch-size"));
  const auto sweep = ResolveTrainConfig({{"batch-size", " 512 ,64"}});
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->batch_sizes, (std::vector<int64_t>{512, 64}));
}

TEST(TrainConfig, EngineNamesAreCheckedByNameOnly) {
  // Any kernels or device the project has resolves here (a coordinator without oneDNN or a
  // GPU validates jobs for workers that have them); the worker checks its own build.
  for (const char* kernels : {"onednn", "eigen"}) EXPECT_TRUE(ResolveTrainConfig({{"kernels", kernels}}).ok());
  EXPECT_TRUE(ResolveTrainConfig({{"device", "cuda"}}).ok());
  EXPECT_EQ(ResolveTrainConfig({})->kernels, "");
  EXPECT_THAT(ResolveTrainConfig({{"kernels", "mkl"}}).status().message(), HasSubstr("one of onednn, eigen"));
}

TEST(TrainConfig, FindsSettingsAndDebugSwitches) {
  ASSERT_NE(FindSettingInfo("data-dir"), nullptr);
  EXPECT_EQ(FindSettingInfo("data_dir"), nullptr);
  EXPECT_TRUE(IsDebugSetting("debug-slow-rank"));
  EXPECT_TRUE(IsDebugSetting("debug-inject-inf-step"));
  EXPECT_FALSE(IsDebugSetting("seed"));
  for (const SettingInfo& info : TrainSettings()) {
    const SettingInfo* found = FindSettingInfo(info.name);
    ASSERT_NE(found, nullptr) << info.name;
    EXPECT_EQ(found->name, info.name);
    EXPECT_EQ(found->help, info.help);
  }
}

TEST(TrainConfig, PrecisionDefaultsFollowThePrecision) {
  const auto fp32 = ResolveTrainConfig({});
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  EXPECT_EQ(fp32->mixed.precision, MathPrecision::kFp32);
  EXPECT_EQ(fp32->mixed.loss_scale.mode, LossScaleMode::kNone);
  EXPECT_EQ(fp32->mixed.allreduce_dtype, WireDtype::kFp32);
  EXPECT_FALSE(fp32->mixed.inject_inf.active());
  for (const char* p : {"bf16", "fp16"}) {
    const auto c = ResolveTrainConfig({{"precision", p}});
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->mixed.precision, std::string(p) == "bf16" ? MathPrecision::kBf16 : MathPrecision::kFp16);
    EXPECT_EQ(c->mixed.loss_scale.mode, LossScaleMode::kDynamic) << p;
    EXPECT_EQ(c->mixed.loss_scale.init_scale, 65536.0f);
    EXPECT_EQ(c->mixed.loss_scale.growth_interval, 2000);
    EXPECT_EQ(c->mixed.allreduce_dtype, WireDtype::kBf16) << p;
  }
  // Given settings win over the precision's defaults, either way round.
  const auto explicit_bf16 =
      ResolveTrainConfig({{"precision", "bf16"}, {"loss-scale", "none"}, {"allreduce-dtype", "fp32"}});
  ASSERT_TRUE(explicit_bf16.ok()) << explicit_bf16.status();
  EXPECT_EQ(explicit_bf16->mixed.loss_scale.mode, LossScaleMode::kNone);
  EXPECT_EQ(explicit_bf16->mixed.allreduce_dtype, WireDtype::kFp32);
  const auto explicit_fp32 = ResolveTrainConfig({{"loss-scale", "dynamic"}, {"allreduce-dtype", "bf16"}});
  ASSERT_TRUE(explicit_fp32.ok()) << explicit_fp32.status();
  EXPECT_EQ(explicit_fp32->mixed.loss_scale.mode, LossScaleMode::kDynamic);
  EXPECT_EQ(explicit_fp32->mixed.allreduce_dtype, WireDtype::kBf16);
}

TEST(TrainConfig, ParsesEveryPrecisionSetting) {
  const auto dynamic = ResolveTrainConfig({{"precision", "fp16"},
                                           {"loss-scale-init", "1024"},
                                           {"loss-scale-growth-interval", "100"},
                                           {"loss-scale-growth-factor", "4"},
                                           {"loss-scale-backoff-factor", "0.25"},
                                           {"debug-inject-inf-step", "3"},
                                           {"debug-inject-inf-rank", "1"},
                                           {"debug-inject-inf-network", "d"}});
  ASSERT_TRUE(dynamic.ok()) << dynamic.status();
  const LossScaleConfig& ls = dynamic->mixed.loss_scale;
  EXPECT_EQ(ls.init_scale, 1024.0f);
  EXPECT_EQ(ls.growth_interval, 100);
  EXPECT_EQ(ls.growth_factor, 4.0f);
  EXPECT_EQ(ls.backoff_factor, 0.25f);
  const InjectInf& inject = dynamic->mixed.inject_inf;
  EXPECT_EQ(inject.step, 3);
  EXPECT_EQ(inject.rank, 1);
  EXPECT_TRUE(inject.d);
  EXPECT_FALSE(inject.g);
  const auto fixed = ResolveTrainConfig({{"loss-scale", "128.5"}});
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->mixed.loss_scale.mode, LossScaleMode::kStatic);
  EXPECT_EQ(fixed->mixed.loss_scale.init_scale, 128.5f);
}

TEST(TrainConfig, BadPrecisionSettingsSayWhatIsAccepted) {
  auto message = [](const RawSettings& s) { return std::string(ResolveTrainConfig(s).status().message()); };
  EXPECT_THAT(message({{"precision", "fp8"}}), HasSubstr("--precision: bad value 'fp8' (one of fp32, bf16, fp16)"));
  EXPECT_THAT(message({{"loss-scale", "-2"}}), HasSubstr("--loss-scale: bad value '-2' (dynamic, none, or a positive"));
  EXPECT_THAT(message({{"loss-scale", "auto"}}), HasSubstr("--loss-scale: bad value 'auto'"));
  EXPECT_THAT(message({{"allreduce-dtype", "fp16"}}), HasSubstr("--allreduce-dtype: bad value 'fp16' (one of fp32, bf16)"));
  // Each range is stated as it is enforced: open where the bound itself is refused.
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-growth-factor", "1"}}),
              HasSubstr("--loss-scale-growth-factor: bad value '1' (a number in (1, "));
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-backoff-factor", "1"}}),
              HasSubstr("--loss-scale-backoff-factor: bad value '1' (a number in (0, 1))"));
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-init", "0"}}),
              HasSubstr("--loss-scale-init: bad value '0' (a number in (0, "));
  EXPECT_TRUE(ResolveTrainConfig({{"precision", "bf16"}, {"loss-scale-backoff-factor", "0.999"},
                                  {"loss-scale-growth-factor", "1.001"}, {"loss-scale-init", "1e-30"}})
                  .ok());
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-growth-interval", "0"}}),
              HasSubstr("--loss-scale-growth-interval: bad value '0' (an integer in [1, 1000000000])"));
  EXPECT_THAT(message({{"loss-scale", "64"}, {"loss-scale-init", "8"}}),
              HasSubstr("--loss-scale-init applies to dynamic loss scaling only, but this run has a static scale of 64"));
  EXPECT_THAT(message({{"loss-scale-growth-interval", "5"}}),
              HasSubstr("--loss-scale-growth-interval applies to dynamic loss scaling only, but this run has none"));
  EXPECT_THAT(message({{"debug-inject-inf-step", "2"}}), HasSubstr("with --loss-scale none nothing skips"));
  EXPECT_THAT(message({{"debug-inject-inf-rank", "1"}}), HasSubstr("--debug-inject-inf-rank needs --debug-inject-inf-step"));
  EXPECT_THAT(message({{"debug-inject-inf-network", "x"}}), HasSubstr("one of g, d, both"));
}

}  // namespace
}  // namespace gantry
