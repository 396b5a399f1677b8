// --augment (runspec/augment_policy.h): parsed and refused by name, one canonical name per
// policy, refused where no augmentation runs (pix2pix, CUDA), and carried by run files and
// RunSpec like every other setting.
#include "runspec/augment_policy.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/run_file.h"
#include "runspec/run_spec_settings.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

TEST(AugmentPolicy, ParsesAnyOrderIntoOneCanonicalPolicy) {
  const auto off = ResolveTrainConfig({});
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->augment.active());  // off unless asked
  EXPECT_EQ(AugmentPolicyName(off->augment), "off");
  EXPECT_EQ(ResolveTrainConfig({{"augment", "off"}})->augment, AugmentPolicy{});

  const auto all = ResolveTrainConfig({{"augment", "cutout, color,translation"}});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->augment, (AugmentPolicy{.color = true, .translation = true, .cutout = true}));
  EXPECT_EQ(AugmentPolicyName(all->augment), "color,translation,cutout");
  const auto two = ResolveTrainConfig({{"augment", "cutout,translation"}});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(AugmentPolicyName(two->augment), "translation,cutout");
  EXPECT_EQ(AugmentPolicyName(AugmentPolicy{.color = true}), "color");
  // The canonical name reads back as the same policy.
  for (const AugmentPolicy& p : {all->augment, two->augment, AugmentPolicy{}, AugmentPolicy{.cutout = true}}) {
    EXPECT_EQ(*ParseAugmentPolicy("--augment", AugmentPolicyName(p)), p);
  }
  EXPECT_EQ(AugmentTransformNames(), (std::vector<std::string>{"color", "translation", "cutout"}));
}

TEST(AugmentPolicy, RefusalsNameTheSettingAndListTheTransforms) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"colour", "entry 1 is no transform"}, {"color,flip", "entry 2 is no transform"},
      {"", "entry 1 is empty"},               {"color,", "entry 2 is empty"},
      {"color,,cutout", "entry 2 is empty"},  {"cutout,color,cutout", "cutout appears twice"},
      {"off,color", "off stands alone"},      {"Color", "entry 1 is no transform"},
      {"none", "entry 1 is no transform"}};
  for (const auto& [value, why] : bad) {
    const absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{"augment", value}});
    ASSERT_FALSE(c.ok()) << value;
    EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << value;
    const std::string message(c.status().message());
    EXPECT_THAT(message, HasSubstr("--augment: bad value '" + value + "'"));
    EXPECT_THAT(message, HasSubstr(why));
    EXPECT_THAT(message, HasSubstr("off, or a comma-separated list of color, translation, cutout, each at most once"));
    EXPECT_EQ(message.find("----"), std::string::npos) << message;
    EXPECT_FALSE(CheckSettingValue("augment", value).ok()) << value;  // what the coordinator checks
  }
}

// The op transforms the unconditional step's images on the CPU: pix2pix and CUDA runs are
// refused when the settings are resolved (so by the coordinator too), naming the fix.
TEST(AugmentPolicy, RefusedForPix2pixAndOnCuda) {
  const auto p2p = ResolveTrainConfig({{"model", "pix2pix"}, {"augment", "translation"}});
  ASSERT_FALSE(p2p.ok());
  EXPECT_THAT(std::string(p2p.status().message()),
              HasSubstr("--augment translation applies to the unconditional GAN step"));
  EXPECT_THAT(std::string(p2p.status().message()), HasSubstr("use --augment off with --model pix2pix"));
  EXPECT_TRUE(ResolveTrainConfig({{"model", "pix2pix"}, {"augment", "off"}}).ok());

  const auto cuda = ResolveTrainConfig({{"device", "cuda"}, {"augment", "cutout,color"}});
  ASSERT_FALSE(cuda.ok());
  EXPECT_THAT(std::string(cuda.status().message()), HasSubstr("--augment color,cutout runs on the CPU only"));
  EXPECT_THAT(std::string(cuda.status().message()), HasSubstr("use --device cpu, or --augment off on a GPU"));
  EXPECT_TRUE(ResolveTrainConfig({{"device", "cuda"}}).ok());
}

TEST(AugmentPolicy, TravelsThroughRunFilesAndRunSpec) {
  const absl::StatusOr<RawSettings> file = ParseRunFile("augment: color,translation\nepochs: 2\n", "run.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  const auto c = ResolveTrainConfig(*file);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->augment, (AugmentPolicy{.color = true, .translation = true}));

  v1::RunSpec spec;
  ASSERT_TRUE(SetRunSpecSetting("augment", "translation,cutout", &spec).ok());
  EXPECT_EQ(spec.augment(), "translation,cutout");
  EXPECT_EQ(FieldOfSetting("augment"), "augment");
  const SpecSettings back = RunSpecToSettings(spec);
  EXPECT_EQ(back, (SpecSettings{{"augment", "translation,cutout"}}));
  EXPECT_TRUE(RunSpecToSettings(v1::RunSpec{}).empty());  // unset: the worker's default, off
}

}  // namespace
}  // namespace gantry
