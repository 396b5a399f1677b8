#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/infer/tile_net_harness.h"
#include "worker/comm/local_communicator.h"
#include "worker/infer/tile_assignment.h"
#include "worker/infer/tile_blend.h"
#include "worker/infer/tile_plan.h"
#include "worker/infer/tiled_map_reduce.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TilePlan, OriginsStrideByTileMinusOverlapAndTheLastIsFlushWithTheEdge) {
  EXPECT_THAT(AxisOrigins(100, 32, 8), ElementsAre(0, 24, 48, 68));
  EXPECT_THAT(AxisOrigins(32, 32, 8), ElementsAre(0));
  EXPECT_THAT(AxisOrigins(64, 32, 0), ElementsAre(0, 32));
  EXPECT_THAT(AxisOrigins(33, 32, 31), ElementsAre(0, 1));
  absl::StatusOr<TilePlan> plan = PlanTiles(40, 100, 32, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->ys, ElementsAre(0, 8));
  EXPECT_EQ(plan->count(), 8);
  EXPECT_EQ(plan->tiles[5], (TileOrigin{8, 24}));
}

TEST(TilePlan, ATileLargerThanTheFieldOrAnOverlapNotBelowTheTileIsRefusedWithTheFix) {
  absl::Status big = PlanTiles(100, 400, 128, 16).status();
  EXPECT_TRUE(absl::IsInvalidArgument(big));
  EXPECT_THAT(big.message(), AllOf(HasSubstr("--tile 128 is larger than the 100x400 field"), HasSubstr("--tile <= 100")));
  absl::Status overlap = PlanTiles(100, 400, 64, 64).status();
  EXPECT_THAT(overlap.message(), AllOf(HasSubstr("--overlap 64 must be in [0, --tile 64)"), HasSubstr("--overlap 16")));
  EXPECT_FALSE(PlanTiles(100, 400, 64, -1).ok());
  EXPECT_FALSE(ParseBlendMode("cubic").ok());
}

struct BlendCase {
  int64_t h, w, tile, overlap;
};

class BlendTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BlendTest, EveryPixelHasWeightAndAgreeingTilesGiveTheFieldBackExactly) {
  const BlendMode mode = *ParseBlendMode(GetParam());
  for (const BlendCase& bc : {BlendCase{37, 101, 16, 5}, BlendCase{32, 32, 32, 0}, BlendCase{64, 96, 32, 0},
                              BlendCase{50, 70, 20, 19}}) {
    const TilePlan plan = *PlanTiles(bc.h, bc.w, bc.tile, bc.overlap);
    const TileBlender blender(plan, mode);
    for (double c : blender.coverage()) ASSERT_GT(c, 0);
    if (mode == BlendMode::kNone) {
      for (double c : blender.coverage()) ASSERT_EQ(c, 1.0);  // exactly one owner
    }
    // Tiles cut from one field agree wherever they overlap: blending them gives it back.
    const int64_t plane = bc.h * bc.w;
    std::vector<float> field(2 * plane);
    for (int64_t i = 0; i < 2 * plane; ++i) field[i] = 0.37f * static_cast<float>(i % 97) - 3.1f;
    std::vector<float> tiles(plan.count() * 2 * bc.tile * bc.tile);
    for (int64_t k = 0; k < plan.count(); ++k) {
      ExtractTile(field.data(), 2, bc.h, bc.w, plan.tiles[k], bc.tile, tiles.data() + k * 2 * bc.tile * bc.tile);
    }
    std::vector<float> out(2 * plane, -99.0f);
    blender.Blend(tiles.data(), 2, out.data());
    ASSERT_EQ(out, field) << GetParam() << " " << bc.h << "x" << bc.w;
    // A constant comes back exactly.
    std::fill(tiles.begin(), tiles.end(), -0.0123f);
    blender.Blend(tiles.data(), 2, out.data());
    for (float v : out) ASSERT_EQ(v, -0.0123f);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, BlendTest, ::testing::Values("gaussian", "linear", "none"));

TEST(TileBlender, GaussianWeightsFavourTheTileCentre) {
  const TileBlender blender(*PlanTiles(16, 16, 16, 0), BlendMode::kGaussian);
  EXPECT_GT(blender.Weight(0, 8, 8), blender.Weight(0, 8, 1));
  EXPECT_GE(blender.Weight(0, 0, 0), 1e-6f);
}

TEST(TileBlender, NoneTakesEachPixelFromTheTileThatOwnsIt) {
  // Two tiles along x: [0, 16) and [10, 26); the cut is the middle of [10, 16): 13.
  const TilePlan plan = *PlanTiles(16, 26, 16, 6);
  const TileBlender blender(plan, BlendMode::kNone);
  std::vector<float> tiles(2 * 16 * 16);
  std::fill(tiles.begin(), tiles.begin() + 256, 1.0f);
  std::fill(tiles.begin() + 256, tiles.end(), 2.0f);
  std::vector<float> out(16 * 26);
  blender.Blend(tiles.data(), 1, out.data());
  EXPECT_EQ(out[12], 1.0f);
  EXPECT_EQ(out[13], 2.0f);
  EXPECT_EQ(out[25], 2.0f);
}

TEST(SeamBandMask, MarksCellsNearInnerTileEdgesOnly) {
  const TilePlan plan = *PlanTiles(32, 100, 32, 8);  // x origins 0 24 48 68; one row
  const std::vector<uint8_t> band = SeamBandMask(plan, 2);
  auto at = [&](int64_t y, int64_t x) { return band[y * 100 + x]; };
  for (int64_t x : {22, 23, 24, 25, 30, 31, 32, 33, 66, 67, 78, 79}) EXPECT_EQ(at(5, x), 1) << x;
  for (int64_t x : {0, 1, 10, 21, 26, 40, 90, 98, 99}) EXPECT_EQ(at(5, x), 0) << x;
  const std::vector<uint8_t> single = SeamBandMask(*PlanTiles(32, 32, 32, 0), 4);
  EXPECT_EQ(std::count(single.begin(), single.end(), 1), 0);
}

TEST(TileAssignment, ContiguousRunsOfGroupsForAnyRankCount) {
  TileAssignment a = AssignTiles(7, 2, 2);  // groups {0,1} {2,3} {4,5} {6}
  EXPECT_THAT(a.rank_begin, ElementsAre(0, 4, 7));
  a = AssignTiles(7, 2, 3);
  EXPECT_THAT(a.rank_begin, ElementsAre(0, 4, 6, 7));
  EXPECT_EQ(a.max_count(), 4);
  a = AssignTiles(3, 1, 5);  // more ranks than tiles
  EXPECT_THAT(a.rank_begin, ElementsAre(0, 1, 2, 3, 3, 3));
  a = AssignTiles(5, 8, 2);
  EXPECT_THAT(a.rank_begin, ElementsAre(0, 5, 5));
}

std::vector<float> Steps(int ranks, const char* blend, int64_t group, int64_t batch) {
  std::vector<std::vector<float>> results(ranks);
  const absl::Status status = RunRanks(ranks, [&](Communicator& comm) -> absl::Status {
    absl::StatusOr<std::vector<float>> r = testing::RunTiledSteps(comm, 40, 72, 16, 4, blend, group, batch, 3);
    if (!r.ok()) return r.status();
    results[comm.rank()] = *std::move(r);
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
  for (int r = 1; r < ranks; ++r) EXPECT_EQ(results[r], results[0]) << "rank " << r << " got another field";
  return results[0];
}

// The field after 3 tiled steps of a conv net in eval mode is the same bits whatever the
// number of ranks and the grouping of the 15 tiles.
TEST(TiledMapReduce, OneRankAndSeveralRanksGiveBitIdenticalFields) {
  for (const char* blend : {"gaussian", "none"}) {
    const std::vector<float> one = Steps(1, blend, 1, 4);
    ASSERT_EQ(one.size(), 3u * 40 * 72);
    EXPECT_GT(std::count_if(one.begin(), one.end(), [](float v) { return std::abs(v) > 0.05f; }), 1000);
    EXPECT_EQ(Steps(2, blend, 1, 4), one) << blend;
    EXPECT_EQ(Steps(2, blend, 3, 4), one) << blend;
    EXPECT_EQ(Steps(3, blend, 2, 4), one) << blend;
    EXPECT_EQ(Steps(20, blend, 1, 4), one) << blend;  // more ranks than tiles
  }
}

TEST(TiledMapReduce, ATileFunctionErrorFailsEveryRank) {
  const TilePlan plan = *PlanTiles(16, 32, 16, 0);
  const TileBlender blender(plan, BlendMode::kLinear);
  const absl::Status status = RunRanks(2, [&](Communicator& comm) -> absl::Status {
    const TileAssignment a = AssignTiles(plan.count(), 1, comm.size());
    std::vector<float> field(16 * 32, 1.0f);
    TiledStepOptions options;
    options.comm.timeout_seconds = 30;
    absl::StatusOr<std::vector<float>> r =
        TiledMapReduce(comm, blender, a, field.data(), options, [&](const std::vector<float>&, int64_t, std::vector<float>&) {
          return comm.rank() == 1 ? absl::InternalError("tile exploded") : absl::OkStatus();
        });
    if (comm.rank() == 0) {
      EXPECT_TRUE(absl::IsAborted(r.status())) << r.status();
    } else {
      EXPECT_THAT(r.status().message(), HasSubstr("tile exploded"));
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace gantry
