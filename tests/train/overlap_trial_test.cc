// --overlap auto's trial (worker/train/overlap_trial.h): its schedule of steps, and that
// every rank keeps the same exchange whatever each measured, the faster on the sum.
#include "worker/train/overlap_trial.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kTrial = OverlapTrial::kWarmUpSteps + 2 * OverlapTrial::kTrialSteps;

TEST(OverlapTrial, WarmsUpAfterBackwardThenAlternatesStartingAfterBackward) {
  OverlapTrial trial;
  std::string kinds;
  for (int64_t s = 0; s < kTrial; ++s) {
    EXPECT_FALSE(trial.ready()) << s;
    kinds += trial.NextStepOverlapped() ? 'O' : 'P';
    trial.Record(0.1);
  }
  EXPECT_EQ(kinds, "PP" + std::string("POPOPOPOPOPO"));
  EXPECT_TRUE(trial.ready());
  EXPECT_FALSE(trial.decided());
}

// Two thread ranks measure differently (one finds each kind faster); the sum of their
// medians decides, and both get the same answer and the same summary.
std::vector<bool> DecideOnTwoRanks(const std::vector<std::vector<double>>& plain,
                                   const std::vector<std::vector<double>>& overlapped, std::string* summary) {
  LocalGroup group(2);
  std::vector<bool> decisions(2);
  std::vector<std::string> summaries(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r, comm = group.Rank(r)]() mutable {
      OverlapTrial trial;
      size_t p = 0, o = 0;
      for (int64_t s = 0; s < kTrial; ++s) {
        const bool warm_up = s < OverlapTrial::kWarmUpSteps;
        // Warm-up steps are slow on purpose: they must not count.
        trial.Record(warm_up ? 100.0 : trial.NextStepOverlapped() ? overlapped[r][o++] : plain[r][p++]);
      }
      absl::StatusOr<bool> d = trial.Decide(*comm, CommOptions{5.0}, &summaries[r]);
      ASSERT_TRUE(d.ok()) << d.status();
      decisions[r] = *d;
      EXPECT_TRUE(trial.decided());
      EXPECT_EQ(trial.NextStepOverlapped(), *d) << "every later step keeps the decision";
    });
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(summaries[0], summaries[1]);
  *summary = summaries[0];
  return decisions;
}

TEST(OverlapTrial, EveryRankKeepsTheKindWithTheSmallerSumOfMedians) {
  std::string summary;
  // Rank 0: overlapped 0.9 s vs 1.0 s; rank 1: overlapped 1.4 s vs 1.1 s. Sums: 2.3 vs 2.1.
  const std::vector<bool> slower = DecideOnTwoRanks({{1.0, 1.0, 1.0, 5.0, 1.0, 1.0}, {1.1, 1.1, 1.1, 1.1, 1.1, 0.1}},
                                                    {{0.9, 0.9, 0.9, 0.9, 0.9, 0.9}, {1.4, 1.4, 1.4, 1.4, 1.4, 1.4}},
                                                    &summary);
  EXPECT_EQ(slower, (std::vector<bool>{false, false}));
  EXPECT_THAT(summary, HasSubstr("--overlap auto: after backward (median step 1150.0 ms overlapped, 1050.0 ms after "
                                 "backward, 6 steps of each, mean over 2 rank(s))"));
  const std::vector<bool> faster =
      DecideOnTwoRanks({{1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, {1.2, 1.2, 1.2, 1.2, 1.2, 1.2}},
                       {{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, {1.3, 1.3, 1.3, 1.3, 1.3, 1.3}}, &summary);
  EXPECT_EQ(faster, (std::vector<bool>{true, true}));
  EXPECT_THAT(summary, HasSubstr("--overlap auto: overlapped"));
  const std::vector<bool> tie = DecideOnTwoRanks({std::vector<double>(6, 1.0), std::vector<double>(6, 1.0)},
                                                 {std::vector<double>(6, 1.0), std::vector<double>(6, 1.0)}, &summary);
  EXPECT_EQ(tie, (std::vector<bool>{true, true})) << "a tie keeps the overlap";
}

}  // namespace
}  // namespace gantry
