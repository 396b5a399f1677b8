#include "worker/flow/case_file.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry::flow {
namespace {

using ::testing::HasSubstr;

TEST(CaseFile, AppliesEachEntryOverTheBase) {
  FlowRequest base;
  base.frames = 50;
  absl::StatusOr<std::vector<FlowRequest>> cases =
      ParseCases("- {re: 80, seed: 3}\n- {re: 120, obstacle: square, u_lattice: 0.05, warmup-periods: 2}\n", "c.yaml",
                 base);
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_EQ((*cases)[0].re, 80);
  EXPECT_EQ((*cases)[0].seed, 3u);
  EXPECT_EQ((*cases)[0].frames, 50);
  EXPECT_EQ((*cases)[1].obstacle, "square");
  EXPECT_EQ((*cases)[1].u_lattice, 0.05);
  EXPECT_EQ((*cases)[1].warmup_periods, 2);
}

TEST(CaseFile, TakesTheObstaclePosition) {
  absl::StatusOr<std::vector<FlowRequest>> cases =
      ParseCases("- {obstacle_x: 60, obstacle-y: 24.5}\n", "c.yaml", FlowRequest{});
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ((*cases)[0].obstacle_x, 60);
  EXPECT_EQ((*cases)[0].obstacle_y, 24.5);
}

TEST(CaseFile, ReadsJson) {
  absl::StatusOr<std::vector<FlowRequest>> cases = ParseCases(R"([{"re": 90, "nx": 300}])", "c.json", FlowRequest{});
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ((*cases)[0].nx, 300);
}

TEST(CaseFile, RefusesWithTheFileTheEntryAndTheFix) {
  auto refusal = [](const std::string& text) {
    absl::StatusOr<std::vector<FlowRequest>> c = ParseCases(text, "c.yaml", FlowRequest{});
    EXPECT_FALSE(c.ok());
    return c.ok() ? std::string() : std::string(c.status().message());
  };
  EXPECT_THAT(refusal("re: 100\n"), HasSubstr("non-empty list of cases"));
  EXPECT_THAT(refusal("[]"), HasSubstr("non-empty list"));
  EXPECT_THAT(refusal("- 5\n"), HasSubstr("case 1 must be a mapping"));
  EXPECT_THAT(refusal("- {re: 100}\n- {viscosity: 3}\n"), HasSubstr("case 2: 'viscosity' is not a case setting"));
  EXPECT_THAT(refusal("- {re: fast}\n"), HasSubstr("must be a number"));
  EXPECT_THAT(refusal("- {nx: 2.5}\n"), HasSubstr("whole number"));
  EXPECT_THAT(refusal("- {re: 1, re: 2}\n"), HasSubstr("c.yaml"));
  EXPECT_THAT(refusal("- [\n"), HasSubstr("not valid YAML/JSON"));
  // Issue 29: --seed -1 wrapped to 2^64 - 1; in a case file too.
  EXPECT_THAT(refusal("- {seed: -1}\n"), HasSubstr("case 1: 'seed' must be a whole number 0 or more"));
  EXPECT_THAT(refusal("- {seed: 18446744073709551616}\n"), HasSubstr("'seed' must be a whole number"));
  EXPECT_THAT(refusal("- {nx: 99999999999}\n"), HasSubstr("'nx' is out of range"));
  EXPECT_THAT(refusal("- {warmup_periods: .inf}\n"), HasSubstr("'warmup_periods' must be a number"));
}

}  // namespace
}  // namespace gantry::flow
