// Every numeric setting has a range: the settings table carries it (help and docs show
// it), and every value outside it, in any spelling, is refused naming the setting before
// any narrowing. The CLI and the coordinator resolve settings with the same table.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/straggler_tracker.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/memory_estimate.h"
#include "runspec/train_config.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string Refusal(const std::string& name, const std::string& value) {
  const absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{name, value}});
  EXPECT_FALSE(c.ok()) << "--" << name << " " << value << " was accepted";
  return c.ok() ? "" : std::string(c.status().message());
}

TEST(SettingRanges, TheStragglerWindowIsBoundedNotNarrowed) {
  // The example: 2147483648 became a negative int and aborted the tracker;
  // 2147483647 asked for a window of that many steps (bad_alloc).
  EXPECT_EQ(Refusal("straggler-window", "2147483648"),
            "--straggler-window: bad value '2147483648' (an integer in [1, 10000])");
  EXPECT_THAT(Refusal("straggler-window", "2147483647"), HasSubstr("(an integer in [1, 10000])"));
  EXPECT_THAT(Refusal("straggler-window", "0"), HasSubstr("(an integer in [1, 10000])"));
  const absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{"straggler-window", "10000"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->straggler.window, kMaxStragglerWindow);
  EXPECT_TRUE(ValidateStragglerConfig(c->straggler).ok());
}

TEST(SettingRanges, NetworkWidthsAndStepCountsHaveUpperBounds) {
  EXPECT_THAT(Refusal("ngf", "1025"), HasSubstr("--ngf: bad value '1025' (an integer in [1, 1024])"));
  EXPECT_THAT(Refusal("ndf", "9223372036854775807"), HasSubstr("--ndf: bad value"));
  EXPECT_THAT(Refusal("debug-slow-rank", "2147483648"), HasSubstr("(an integer in [-1, 65535])"));
  EXPECT_THAT(Refusal("debug-inject-inf-rank", "-1"), HasSubstr("(an integer in [0, 65535])"));
  EXPECT_THAT(Refusal("epochs", "1e9"), HasSubstr("--epochs: bad value '1e9'"));
  EXPECT_THAT(Refusal("image-size", "8192"), HasSubstr("--image-size: bad value '8192'"));
  EXPECT_THAT(Refusal("batch-size", "64,16777217"), HasSubstr("positive integers up to 16777216"));
  EXPECT_THAT(Refusal("seed", "-1"), HasSubstr("(an integer in [0, 18446744073709551615])"));
  EXPECT_TRUE(ResolveTrainConfig({{"seed", "18446744073709551615"}}).ok());
  EXPECT_TRUE(ResolveTrainConfig({{"ngf", "1024"}, {"model", "pix2pix"}}).ok());
}

// The class: every setting that has a range refuses every spelling of a bad number.
TEST(SettingRanges, EveryNumericSettingRefusesEveryBadSpellingByName) {
  int numeric = 0;
  for (const SettingInfo& s : TrainSettings()) {
    if (s.range.empty()) continue;
    ++numeric;
    std::vector<std::string> bad = {"abc", "nan", "inf", "-inf", "1e400", "-1e400", "", "0x10", "1,2,x", "1e"};
    // Past int64 either way, and a fraction: bad for every whole-number setting.
    if (s.range.find("integer") != std::string::npos || s.range.find("power of two") != std::string::npos) {
      bad.insert(bad.end(), {"99999999999999999999999", "-99999999999999999999999", "1.5", "1e3"});
    }
    for (const std::string& value : bad) {
      EXPECT_THAT(Refusal(s.name, value), HasSubstr("--" + s.name)) << s.name << " " << value;
    }
  }
  EXPECT_GE(numeric, 35);  // every number of the table, not a few
}

// Every refusal of a value, of whatever kind (numbers, choices, switches), starts with
// the setting's name written once: "--optimizer: bad value ...". (A unity batch once let
// a file-local helper that adds "--" take the call of one that does not, and the worker
// and the coordinator said "----optimizer".)
TEST(SettingRanges, EveryRefusalNamesItsSettingOnce) {
  int refused = 0;
  for (const SettingInfo& s : TrainSettings()) {
    for (const std::string value : {"no-such-value", "-5", "1e400"}) {
      const absl::StatusOr<TrainConfig> c = ResolveTrainConfig({{s.name, value}});
      if (c.ok()) continue;  // paths and names take any text
      ++refused;
      EXPECT_FALSE(absl::StartsWith(c.status().message(), "---")) << c.status();
      const absl::Status alone = CheckSettingValue(s.name, value);
      EXPECT_FALSE(absl::StartsWith(alone.message(), "---")) << alone;
    }
  }
  EXPECT_GE(refused, 60);
  EXPECT_EQ(Refusal("optimizer", "adamw"), "--optimizer: bad value 'adamw' (one of adam, sgd)");
  EXPECT_EQ(Refusal("model", "foo"), "--model: bad value 'foo' (one of dcgan, pix2pix)");
  EXPECT_EQ(Refusal("sync-bn", "maybe"), "--sync-bn: bad value 'maybe' (true or false)");
}

// docs/training.md lists each numeric setting's range, as the table states it.
TEST(SettingRanges, TheDocsListEveryRangeAsTheTableStatesIt) {
  std::ifstream in(std::string(GANTRY_SOURCE_DIR) + "/docs/training.md");
  ASSERT_TRUE(in) << "docs/training.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const SettingInfo& s : TrainSettings()) {
    if (s.range.empty()) continue;
    EXPECT_THAT(text.str(), HasSubstr(absl::StrCat("| `--", s.name, "` | ", s.range, " |")))
        << "docs/training.md's table of ranges lacks --" << s.name;
  }
}

TEST(MemoryEstimate, ARunTooLargeForTheMachineIsRefusedBeforeAnythingIsAllocated) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  TrainConfig dcgan;
  EXPECT_TRUE(CheckRunFitsMemory(dcgan, 1, 8 * kGiB).ok());
  dcgan.batch_sizes = {64, kMaxBatchSize};
  const absl::Status big_batch = CheckRunFitsMemory(dcgan, 1, 64 * kGiB);
  EXPECT_TRUE(absl::IsInvalidArgument(big_batch));
  EXPECT_THAT(big_batch.message(), HasSubstr("--batch-size 16777216 on 1 rank needs about"));
  EXPECT_THAT(big_batch.message(), HasSubstr("lower --batch-size, or run on more ranks"));
  TrainConfig p2p;
  p2p.model = "pix2pix";
  p2p.pix2pix.image_size = 256;
  p2p.batch_sizes = {4};
  EXPECT_TRUE(CheckRunFitsMemory(p2p, 1, 16 * kGiB).ok());
  p2p.pix2pix.ngf = 1024;
  p2p.pix2pix.ndf = 1024;
  const absl::Status wide = CheckRunFitsMemory(p2p, 1, 64 * kGiB);
  EXPECT_THAT(wide.message(), HasSubstr("--ngf 1024, --ndf 1024"));
  EXPECT_THAT(wide.message(), HasSubstr("--ngf, --ndf or --image-size"));
  // More ranks share the rows, not the model.
  EXPECT_LT(TrainBytesPerRank(dcgan, 4096, 4), TrainBytesPerRank(dcgan, 4096, 1));
}

// Unrolling keeps each step's activations: M times G's and D's; pushforward keeps one
// step's. A window that does not fit is refused naming --unroll and the fix.
TEST(MemoryEstimate, UnrolledTrainingKeepsEachStepsActivations) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  TrainConfig p2p;
  p2p.model = "pix2pix";
  p2p.pix2pix.image_size = 256;
  p2p.batch_sizes = {16};
  const double one = TrainActivationFloatsPerSample(p2p);
  p2p.pix2pix.unroll.steps = 8;
  EXPECT_DOUBLE_EQ(TrainActivationFloatsPerSample(p2p), 8 * one);
  p2p.pix2pix.unroll.loss = UnrollLoss::kLast;  // G's 8 passes in the graph, D's on the last only
  EXPECT_LT(TrainActivationFloatsPerSample(p2p), 8 * one);
  EXPECT_GT(TrainActivationFloatsPerSample(p2p), 4 * one);
  p2p.pix2pix.unroll.pushforward = true;
  EXPECT_DOUBLE_EQ(TrainActivationFloatsPerSample(p2p), one);
  p2p.pix2pix.unroll.pushforward = false;
  p2p.pix2pix.unroll.loss = UnrollLoss::kEvery;
  p2p.pix2pix.unroll.steps = 64;
  const absl::Status deep = CheckRunFitsMemory(p2p, 1, 16 * kGiB);
  EXPECT_TRUE(absl::IsInvalidArgument(deep));
  EXPECT_THAT(deep.message(), HasSubstr("--unroll 64)"));
  EXPECT_THAT(deep.message(), HasSubstr("--unroll (or add --pushforward)"));
}

TEST(MemoryEstimate, TheDcganCountMatchesItsCheckpointSize) {
  // docs/run-folder.md: a DCGAN checkpoint with Adam is about 29 MiB (3 floats a parameter).
  const double mib = ModelParameterCount(TrainConfig{}) * 3 * 4 / (1 << 20);
  EXPECT_NEAR(mib, 29, 2);
}

}  // namespace
}  // namespace gantry
