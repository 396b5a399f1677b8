// Which settings may change on --resume, compared by resolved value, and the record's
// digest (runspec/resume_rules.h; issue 45, items 4-6).
#include "runspec/resume_rules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

std::vector<std::string> Names(const std::vector<SettingChange>& changes) {
  std::vector<std::string> names;
  for (const SettingChange& c : changes) names.push_back(c.name);
  return names;
}

TEST(ResumeRules, EverySettingHasAKindAndQualityIsRecorded) {
  EXPECT_EQ(ResumeRuleOf("data-dir"), ResumeRule::kFree);
  EXPECT_EQ(ResumeRuleOf("out"), ResumeRule::kFree);
  EXPECT_EQ(ResumeRuleOf("epochs"), ResumeRule::kExtendable);
  for (const char* name : {"quality", "lr", "lr-scaling", "base-batch-size", "warmup-steps", "warmup-start",
                           "d-lr-ratio", "g-ema", "target-fd", "stop-at-target", "seed", "batch-size"}) {
    EXPECT_EQ(ResumeRuleOf(name), ResumeRule::kRecorded) << name;
  }
  for (const std::string& name : FreeOnResumeSettings()) {
    EXPECT_NE(FindSettingInfo(name), nullptr) << name << " is not a setting";
  }
}

TEST(ResumeRules, TheRecordLeavesOutTheFreeSettingsAndTheFolder) {
  const RawSettings record = SettingsRecordOf(
      {{"lr", "0.001"}, {"out", "runs/a"}, {"data-dir", "/d"}, {"keep-checkpoints", "2"}, {"quality", "fast"}});
  EXPECT_THAT(record, ElementsAre(std::pair<const std::string, std::string>("lr", "0.001"),
                                  std::pair<const std::string, std::string>("quality", "fast")));
}

TEST(ResumeRules, TheRecordedValueItsDefaultOrAnotherSpellingIsNoChange) {
  // Issue 45, item 6: 64 is the default the run used.
  EXPECT_THAT(ChangedSettings({{"lr", "0.0002"}}, {{"lr", "2e-4"}, {"base-batch-size", "64"}}), IsEmpty());
  EXPECT_THAT(ChangedSettings({{"sync-bn", "true"}}, {{"sync-bn", "1"}, {"lr-scaling", "none"}}), IsEmpty());
  // Pix2Pix's own default rate, given or not.
  EXPECT_THAT(ChangedSettings({{"model", "pix2pix"}, {"dataset", "flow"}},
                              {{"model", "pix2pix"}, {"dataset", "flow"}, {"lr", "0.0002"}}),
              IsEmpty());
  // The free settings are never a change.
  EXPECT_THAT(ChangedSettings({{"data-dir", "/a"}}, {{"data-dir", "/b"}, {"progress-seconds", "1"}}), IsEmpty());
}

TEST(ResumeRules, AChangeNamesTheSettingAndBothValues) {
  const std::vector<SettingChange> changes =
      ChangedSettings({{"quality", "fast"}, {"lr", "0.001"}}, {{"quality", "full"}, {"base-batch-size", "32"}});
  EXPECT_THAT(Names(changes), ElementsAre("base-batch-size", "lr", "quality"));
  EXPECT_EQ(changes[0].before, "not given (its default, 64)");
  EXPECT_EQ(changes[0].after, "32");
  EXPECT_EQ(changes[1].before, "0.001");
  EXPECT_EQ(changes[1].after, "not given (its default, 0.0001)");
  EXPECT_EQ(changes[2].before, "fast");
  EXPECT_EQ(changes[2].after, "full");
  EXPECT_THAT(ChangedSettings({}, {{"epochs", "3"}}),
              ElementsAre(Field(&SettingChange::rule, ResumeRule::kExtendable)));
  // A value that does not resolve is a change, not a crash.
  EXPECT_THAT(Names(ChangedSettings({}, {{"lr", "abc"}})), ElementsAre("lr"));
}

TEST(ResumeRules, TheDigestFollowsEveryPair) {
  const RawSettings a = {{"lr", "0.001"}, {"quality", "fast"}};
  EXPECT_EQ(SettingsDigest(a), SettingsDigest(RawSettings(a)));
  EXPECT_EQ(SettingsDigest(a).size(), 16u);
  EXPECT_NE(SettingsDigest(a), SettingsDigest({{"lr", "0.001"}, {"quality", "full"}}));
  EXPECT_NE(SettingsDigest({{"a", "bc"}}), SettingsDigest({{"ab", "c"}}));
  EXPECT_EQ(EpochsOf({{"epochs", "4"}}), 4);
  EXPECT_EQ(EpochsOf({}), 1);
}

}  // namespace
}  // namespace gantry
