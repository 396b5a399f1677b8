#include "worker/train/train_config.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

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

TEST(TrainConfig, BadValuesNameTheSetting) {
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "0"}}).status().message(), HasSubstr("--batch-size: bad value '0'"));
  EXPECT_THAT(ResolveTrainConfig({{"batch-size", "64,x"}}).status().message(), HasSubstr("--batch-size"));
  EXPECT_THAT(ResolveTrainConfig({{"epochs", "-1"}}).status().message(), HasSubstr("--epochs"));
  EXPECT_THAT(ResolveTrainConfig({{"lr", "nan"}}).status().message(), HasSubstr("--lr"));
  EXPECT_THAT(ResolveTrainConfig({{"dataset", "cifar"}}).status().message(),
              HasSubstr("one of mnist, fashion-mnist"));
  EXPECT_THAT(ResolveTrainConfig({{"nope", "1"}}).status().message(), HasSubstr("unknown setting 'nope'"));
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
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-growth-factor", "1"}}),
              HasSubstr("--loss-scale-growth-factor: 1 must be a finite number above 1"));
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-backoff-factor", "1"}}),
              HasSubstr("--loss-scale-backoff-factor: 1 must lie strictly between 0 and 1"));
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-init", "0"}}), HasSubstr("--loss-scale-init: 0 is not"));
  EXPECT_THAT(message({{"precision", "bf16"}, {"loss-scale-growth-interval", "0"}}),
              HasSubstr("--loss-scale-growth-interval: bad value '0' (an integer >= 1)"));
  EXPECT_THAT(message({{"loss-scale", "64"}, {"loss-scale-init", "8"}}),
              HasSubstr("--loss-scale-init applies to dynamic loss scaling only, but this run has a static scale of 64"));
  EXPECT_THAT(message({{"loss-scale-growth-interval", "5"}}),
              HasSubstr("--loss-scale-growth-interval applies to dynamic loss scaling only, but this run has none"));
  EXPECT_THAT(message({{"debug-inject-inf-step", "2"}}), HasSubstr("with --loss-scale none nothing skips"));
  EXPECT_THAT(message({{"debug-inject-inf-rank", "1"}}), HasSubstr("--debug-inject-inf-rank needs --debug-inject-inf-step"));
  EXPECT_THAT(message({{"debug-inject-inf-network", "x"}}), HasSubstr("one of g, d, both"));
}

TEST(RunFile, YamlWithListAndSnakeCase) {
  const std::string path = WriteTemp(
      "run.yaml", "dataset: mnist\ndata_dir: /x\nbatch-size: [64, 128]\nepochs: 2\nprecision: bf16\nloss_scale: 512\n");
  const auto raw = ReadRunFile(path);
  ASSERT_TRUE(raw.ok()) << raw.status();
  const auto c = ResolveTrainConfig(*raw);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(c->data_dir, "/x");
  EXPECT_EQ(c->mixed.precision, MathPrecision::kBf16);
  EXPECT_EQ(c->mixed.loss_scale.mode, LossScaleMode::kStatic);
  EXPECT_EQ(c->mixed.loss_scale.init_scale, 512.0f);
}

TEST(RunFile, JsonWorksToo) {
  const std::string path = WriteTemp("run.json", R"({"dataset": "mnist", "batch-size": "32", "seed": 3})");
  const auto c = ResolveTrainConfig(*ReadRunFile(path));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->batch_sizes, std::vector<int64_t>{32});
}

TEST(RunFile, ErrorsNameTheFileAndKey) {
  EXPECT_THAT(ReadRunFile("/nonexistent/run.yaml").status().message(), HasSubstr("cannot open run file"));
  EXPECT_THAT(ReadRunFile(WriteTemp("bad.yaml", "epochs: [1\n")).status().message(), HasSubstr("not valid YAML"));
  EXPECT_THAT(ReadRunFile(WriteTemp("unk.yaml", "epoch: 3\n")).status().message(), HasSubstr("unknown setting 'epoch'"));
  EXPECT_THAT(ReadRunFile(WriteTemp("list.yaml", "- 1\n- 2\n")).status().message(), HasSubstr("mapping"));
}

}  // namespace
}  // namespace gantry
