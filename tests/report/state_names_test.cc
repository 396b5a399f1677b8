#include "report/state_names.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::ElementsAre;

// The names are a contract with scripts, dashboards and alerts: spelled out here once
// more on purpose, so a renamed state fails this test.
TEST(StateNames, JobStatesInLifecycleOrderWithTheirNames) {
  std::vector<std::string> names;
  for (v1::JobState state : JobStates()) names.push_back(JobStateName(state));
  EXPECT_THAT(names, ElementsAre("queued", "running", "cancelling", "succeeded", "failed", "cancelled"));
  EXPECT_EQ(JobStateNameList(), "queued, running, cancelling, succeeded, failed, cancelled");
}

TEST(StateNames, EveryEnumValueHasANameAndUnknownOnesAreUnspecified) {
  for (int i = v1::JobState_MIN; i <= v1::JobState_MAX; ++i) {
    if (i != v1::JOB_STATE_UNSPECIFIED) {
      EXPECT_NE(JobStateName(static_cast<v1::JobState>(i)), "unspecified") << i;
    }
  }
  for (int i = v1::GroupState_MIN; i <= v1::GroupState_MAX; ++i) {
    if (i != v1::GROUP_STATE_UNSPECIFIED) {
      EXPECT_NE(GroupStateName(static_cast<v1::GroupState>(i)), "unspecified") << i;
    }
  }
  EXPECT_EQ(JobStateName(v1::JOB_STATE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(JobStateName(static_cast<v1::JobState>(99)), "unspecified");
}

TEST(StateNames, ParsesEveryNameBack) {
  for (v1::JobState state : JobStates()) {
    absl::StatusOr<v1::JobState> parsed = ParseJobState(JobStateName(state));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, state);
  }
}

TEST(StateNames, RefusesOtherNamesListingTheValidOnes) {
  for (const char* name : {"bogus", "unspecified", "", "Queued", "queued "}) {
    absl::StatusOr<v1::JobState> parsed = ParseJobState(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(),
              absl::StrCat("'", name, "' is not a job state (queued, running, cancelling, succeeded, failed, cancelled)"));
  }
}

TEST(StateNames, GroupStates) {
  std::vector<std::string> names;
  for (v1::GroupState state : GroupStates()) names.push_back(GroupStateName(state));
  EXPECT_THAT(names, ElementsAre("idle", "busy", "lost"));
  EXPECT_EQ(GroupStateName(v1::GROUP_STATE_IDLE), "idle");
  EXPECT_EQ(GroupStateName(v1::GROUP_STATE_BUSY), "busy");
  EXPECT_EQ(GroupStateName(v1::GROUP_STATE_LOST), "lost");
  EXPECT_EQ(GroupStateName(v1::GROUP_STATE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(GroupStateName(static_cast<v1::GroupState>(99)), "unspecified");
}

}  // namespace
}  // namespace gantry
