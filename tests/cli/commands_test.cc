// The subcommand classes read their command lines as `gantry` did before they were
// classes: only the settings and rollout options given reach the request.
#include <algorithm>
#include <vector>

#include "cli/generate_command.h"
#include "cli/rollout_command.h"
#include "cli/submit_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Parses `args` (after the program name) with `app`; CLI11 wants them in reverse.
void Parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());
  app.parse(args);
}

TEST(SubmitCommand, OnlyTheSettingsGivenOverrideTheRunFile) {
  CLI::App app;
  SubmitCommand submit(app);
  Parse(app, {"submit", "run.yaml", "--epochs", "3", "--sync-bn", "--name", "n", "--world-size", "2"});
  ASSERT_TRUE(submit.selected());
  const SubmitArgs args = submit.Args();
  EXPECT_EQ(args.run_file, "run.yaml");
  EXPECT_THAT(args.settings, ElementsAre(Pair("epochs", "3"), Pair("sync-bn", "true")));
  EXPECT_EQ(args.name, "n");
  EXPECT_EQ(args.world_size, 2);
  EXPECT_EQ(args.max_attempts, 0);
  EXPECT_FALSE(args.watch);
}

TEST(RolloutCommand, OptionsLeftOutStayUnsetAndAZeroGivenIsKept) {
  CLI::App app;
  RolloutCommand rollout(app);
  Parse(app, {"rollout", "job-3", "--case", "data/case-1", "--steps", "20", "--overlap", "0", "--tile-batch", "8",
              "--report-every", "5", "--watch"});
  ASSERT_TRUE(rollout.selected());
  const RolloutArgs args = rollout.Args();
  EXPECT_EQ(args.source_job_id, "job-3");
  EXPECT_EQ(args.case_dir, "data/case-1");
  EXPECT_EQ(args.steps, 20);
  EXPECT_EQ(args.overlap, 0);
  EXPECT_EQ(args.tile_batch, 8);
  EXPECT_EQ(args.report_every, 5);
  EXPECT_FALSE(args.start_frame.has_value());
  EXPECT_FALSE(args.tile.has_value());
  EXPECT_FALSE(args.group.has_value());
  EXPECT_TRUE(args.watch);
}

TEST(GenerateCommand, OptionsLeftOutStayUnsetAndTheRequestCarriesOnlyThoseGiven) {
  CLI::App app;
  GenerateCommand generate(app);
  Parse(app, {"generate", "job-3", "--count", "16", "--seed", "0", "--name", "best", "--case", "data/case-1",
              "--frame", "0"});
  ASSERT_TRUE(generate.selected());
  const GenerateArgs args = generate.Args();
  EXPECT_EQ(args.source_job_id, "job-3");
  EXPECT_EQ(args.count, 16);
  EXPECT_EQ(args.seed, 0u);
  EXPECT_EQ(args.frame, 0);
  EXPECT_FALSE(args.batch.has_value());
  EXPECT_FALSE(args.steps.has_value());
  const v1::SubmitJobRequest request = BuildGenerateRequest(args);
  const v1::GenerateSpec& g = request.generate();
  EXPECT_FALSE(request.has_spec());
  EXPECT_EQ(g.name(), "best");
  EXPECT_TRUE(g.has_seed());
  EXPECT_EQ(g.seed().value(), 0u);
  EXPECT_FALSE(g.has_batch());
  EXPECT_TRUE(g.case_dir().starts_with("/")) << "made absolute: " << g.case_dir();
  EXPECT_TRUE(g.case_dir().ends_with("/data/case-1"));
}

TEST(Commands, OnlyTheSubcommandOnTheCommandLineIsSelected) {
  CLI::App app;
  SubmitCommand submit(app);
  RolloutCommand rollout(app);
  Parse(app, {"submit", "--epochs", "1"});
  EXPECT_TRUE(submit.selected());
  EXPECT_FALSE(rollout.selected());
}

}  // namespace
}  // namespace gantry::cli
