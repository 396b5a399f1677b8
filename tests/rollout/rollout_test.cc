#include "worker/rollout/rollout.h"

#include <atomic>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/flow_fixture.h"
#include "worker/comm/local_communicator.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// "Copy the input": the rollout of persistence, whose error the report also gives.
TileFunction Persistence() {
  return [](const std::vector<float>& in, int64_t batch, std::vector<float>& out) {
    const int64_t plane = static_cast<int64_t>(in.size()) / (batch * 4);
    for (int64_t b = 0; b < batch; ++b) {
      std::copy_n(in.data() + b * 4 * plane, 3 * plane, out.data() + b * 3 * plane);
    }
    return absl::OkStatus();
  };
}

class RolloutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("gantry_rollout");
    testing::WriteFixtureCase(dir_ + "/c", {.frames = 60, .ny = 12, .nx = 20, .json = ""});
    flow_ = *LoadFlowCase(dir_ + "/c");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  FlowCase flow_;
};

TEST_F(RolloutTest, PersistenceScoresItsOwnBaselineAndTheSplitDoesNotMatter) {
  RolloutOptions o;
  o.start_frame = 2;
  o.steps = 28;
  o.horizon = 2;
  o.tile = 8;
  o.overlap = 2;
  std::vector<RolloutResult> results(2);
  for (int ranks : {1, 2}) {
    const absl::Status status = RunRanks(ranks, [&](Communicator& comm) -> absl::Status {
      absl::StatusOr<RolloutResult> r = RunRollout(comm, flow_, o, Persistence());
      if (!r.ok()) return r.status();
      if (comm.rank() == 0) results[ranks - 1] = *std::move(r);
      return absl::OkStatus();
    });
    ASSERT_TRUE(status.ok()) << status;
  }
  const RolloutResult& r = results[0];
  ASSERT_EQ(r.rows.size(), 28u);
  EXPECT_EQ(r.tiles, 2 * 3);
  for (const RolloutStepRow& row : r.rows) {
    EXPECT_NEAR(row.relative_l2, row.persistence_relative_l2, 1e-5);
    ASSERT_TRUE(row.seam_relative_l2.has_value());
    EXPECT_GT(row.relative_l2, 0.1);  // the wave moves: persistence is not the truth
  }
  EXPECT_TRUE(r.summary.first_below.has_value());
  EXPECT_EQ(r.predicted_vorticity.size(), 29u);
  // The wave's probe signal oscillates with 0.5 rad per frame: 2 frames per step.
  ASSERT_TRUE(r.summary.strouhal_true.has_value()) << r.summary.strouhal_note;
  EXPECT_NEAR(*r.summary.strouhal_true, 2 * 0.5 / (2 * 3.14159265) / (2 * 10) * 4 / 0.05, 0.03);
  // Persistence's probe never moves.
  EXPECT_FALSE(r.summary.strouhal_predicted.has_value());
  EXPECT_THAT(r.summary.strouhal_note, HasSubstr("predicted: the probe's uy does not oscillate"));
  // 2 ranks: the same rows, bit for bit.
  ASSERT_EQ(results[1].rows.size(), r.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_EQ(results[1].rows[i].relative_l2, r.rows[i].relative_l2);
    EXPECT_EQ(results[1].rows[i].vorticity_correlation, r.rows[i].vorticity_correlation);
  }
}

TEST_F(RolloutTest, TooManyStepsOrAnUnfitTileAreRefusedWithTheFix) {
  const absl::Status status = RunRanks(1, [&](Communicator& comm) -> absl::Status {
    absl::StatusOr<RolloutResult> r =
        RunRollout(comm, flow_, {.start_frame = 5, .steps = 28, .horizon = 2, .tile = 8, .comm = {}},
                   Persistence());
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
    EXPECT_THAT(r.status().message(), AllOf(HasSubstr("needs frame 61"), HasSubstr("--steps <= 27")));
    r = RunRollout(comm, flow_, {.steps = 1, .tile = 16, .comm = {}}, Persistence());
    EXPECT_THAT(r.status().message(), HasSubstr("--tile 16 is larger than the 12x20 field"));
    r = RunRollout(comm, flow_, {.steps = 1, .comm = {}}, Persistence());
    EXPECT_THAT(r.status().message(), HasSubstr("not square: give --tile"));
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// One rank's wish to stop (a pool's cancel reaches rank 0 only) stops every rank before
// the same step; rank 0 hears of each step done before that.
TEST_F(RolloutTest, OneRanksStopStopsEveryRankBeforeTheSameStep) {
  std::atomic<int> rank0_calls{0};
  std::vector<int64_t> steps_done;
  const absl::Status status = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    RolloutOptions o{.steps = 10, .horizon = 1, .tile = 8, .overlap = 2, .comm = {}};
    o.should_stop = [&comm, &rank0_calls] { return comm.rank() == 0 && ++rank0_calls >= 3; };
    o.on_step = [&](int64_t step, double tiles_per_second) {
      EXPECT_EQ(comm.rank(), 0);
      EXPECT_GE(tiles_per_second, 0);
      steps_done.push_back(step);
    };
    absl::StatusOr<RolloutResult> r = RunRollout(comm, flow_, o, Persistence());
    EXPECT_TRUE(absl::IsCancelled(r.status())) << comm.rank() << ": " << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr("stopped before rollout step 3"));
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(steps_done, (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace gantry
