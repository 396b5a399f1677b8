#include "runspec/run_spec_settings.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(RunSpecSettings, OnlySetFieldsBecomeSettings) {
  v1::RunSpec spec;
  spec.set_dataset("mnist");
  spec.add_batch_sizes(64);
  spec.add_batch_sizes(128);
  spec.mutable_lr()->set_value(0.0001);
  spec.mutable_beta1()->set_value(0.0);  // a zero that was given
  spec.mutable_sync_bn()->set_value(true);
  const SpecSettings settings = RunSpecToSettings(spec);
  EXPECT_EQ(settings, (SpecSettings{{"dataset", "mnist"},
                                    {"batch-size", "64,128"},
                                    {"lr", "1e-04"},  // shortest round-trip form
                                    {"beta1", "0"},
                                    {"sync-bn", "true"}}));
}

TEST(RunSpecSettings, SettingsRoundTripThroughTheSpec) {
  const SpecSettings given = {{"model", "dcgan"},   {"epochs", "3"},       {"batch-size", "64,512"},
                              {"seed", "0"},        {"momentum", "0.9"},   {"comm-timeout", "12.5"},
                              {"rebalance", "true"}, {"debug-slow-rank", "0"}, {"adam-eps", "1e-07"}};
  v1::RunSpec spec;
  for (const auto& [name, value] : given) ASSERT_TRUE(SetRunSpecSetting(name, value, &spec).ok()) << name;
  EXPECT_EQ(RunSpecToSettings(spec), given);
}

TEST(RunSpecSettings, BadValuesAndUnknownSettingsNameTheSetting) {
  v1::RunSpec spec;
  absl::Status s = SetRunSpecSetting("epochs", "three", &spec);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("--epochs: bad value 'three'"));
  s = SetRunSpecSetting("sync-bn", "maybe", &spec);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--sync-bn"));
  s = SetRunSpecSetting("batch-size", "64,x", &spec);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--batch-size"));
  s = SetRunSpecSetting("warp-speed", "9", &spec);
  EXPECT_THAT(std::string(s.message()), HasSubstr("unknown setting 'warp-speed'"));
  // The run folder is the worker's choice in pool mode, not part of a spec.
  EXPECT_FALSE(SetRunSpecSetting("out", "runs/x", &spec).ok());
}

TEST(RunSpecSettings, FieldAndSettingNamesMap) {
  EXPECT_EQ(SettingOfField("data_dir"), "data-dir");
  EXPECT_EQ(SettingOfField("batch_sizes"), "batch-size");
  EXPECT_EQ(FieldOfSetting("batch-size"), "batch_sizes");
  EXPECT_EQ(FieldOfSetting("straggler-window"), "straggler_window");
  EXPECT_EQ(FieldOfSetting("batch-sizes"), "");
  EXPECT_EQ(SettingOfField("no_such_field"), "");
}

// `gantry submit` offers the worker's flags: every setting of gantry-worker train that
// describes the run (not where it writes or how often it prints) must be in RunSpec.
TEST(RunSpecSettings, EveryWorkerRunSettingHasAField) {
  const std::vector<std::string> names = RunSpecSettingNames();
  for (const SettingInfo& info : TrainSettings()) {
    if (info.name == "out" || info.name == "progress-seconds") continue;
    EXPECT_NE(std::find(names.begin(), names.end(), info.name), names.end())
        << "worker setting --" << info.name << " has no RunSpec field; add it to run_spec.proto";
  }
}

}  // namespace
}  // namespace gantry
