// The settings make-flow refuses, each with its reason and fix, and the defaults.
#include "gtest/gtest.h"
#include "gmock/gmock.h"
#include "worker/flow/flow_params.h"

namespace gantry::flow {
namespace {

using ::testing::HasSubstr;

std::string Refusal(FlowRequest r) {
  absl::StatusOr<FlowSetup> s = ResolveFlow(r);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.ok() || absl::IsInvalidArgument(s.status()));
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(FlowParams, DefaultsResolveToAStableSmallCase) {
  absl::StatusOr<FlowSetup> s = ResolveFlow(FlowRequest{});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->request.diameter, 8);
  EXPECT_NEAR(s->nu, 0.1 * 8 / 100, 1e-12);  // Re on the diameter
  EXPECT_NEAR(s->tau, 0.5 + 3 * s->nu, 1e-12);
  EXPECT_EQ(s->every, 20);  // D / (0.2 U) / 20
  EXPECT_EQ(s->warmup_steps, 4000);
  EXPECT_GT(s->probe_x, s->obstacle.cx);
  EXPECT_EQ(s->probe_y, static_cast<int>(s->obstacle.cy));
}

TEST(FlowParams, RefusesTauTooCloseToOneHalf) {
  FlowRequest r;
  r.u_lattice = 0.01;
  r.re = 200;
  r.diameter = 8;
  const std::string m = Refusal(r);
  EXPECT_THAT(m, HasSubstr("too close to 0.5"));
  EXPECT_THAT(m, HasSubstr("raise --diameter"));
}

TEST(FlowParams, RefusesAVelocityNearTheSoundSpeed) {
  FlowRequest r;
  r.u_lattice = 0.4;
  EXPECT_THAT(Refusal(r), HasSubstr("sound speed"));
}

TEST(FlowParams, RefusesTooFewCellsAcrossTheObstacle) {
  FlowRequest r;
  r.diameter = 4;
  EXPECT_THAT(Refusal(r), HasSubstr("too few cells across"));
}

TEST(FlowParams, RefusesAnUnderResolvedHighReynoldsNumber) {
  FlowRequest r;
  r.re = 400;  // Re/D = 50
  const std::string m = Refusal(r);
  EXPECT_THAT(m, HasSubstr("cell Reynolds number"));
  EXPECT_THAT(m, HasSubstr("--diameter 20"));
}

TEST(FlowParams, RefusesABlockedChannelAndAShortDomain) {
  FlowRequest r;
  r.diameter = 20;  // 31 % of ny = 64
  EXPECT_THAT(Refusal(r), HasSubstr("--ny 80"));
  r = FlowRequest{};
  r.nx = 40;  // the obstacle 2 D in, the probe 3 D behind it: no room
  EXPECT_THAT(Refusal(r), HasSubstr("too short"));
}

TEST(FlowParams, PlacesTheObstacleWhereAskedAndTheProbeBehindIt) {
  FlowRequest r;
  r.obstacle_x = 70;
  r.obstacle_y = 20;
  absl::StatusOr<FlowSetup> s = ResolveFlow(r);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->obstacle.cx, 70);
  EXPECT_EQ(s->obstacle.cy, 20);
  EXPECT_EQ(s->probe_x, 70 + 3 * 8);
  EXPECT_EQ(s->probe_y, 20);
  r.obstacle_y = 0;  // the default row
  s = ResolveFlow(r);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->obstacle.cy, 32);
}

TEST(FlowParams, RefusesAnObstacleAtTheInletPastTheRowsOrTooFarDownstream) {
  FlowRequest r;
  r.obstacle_x = 15;  // D = 8: closer than 2 D to the inlet
  std::string m = Refusal(r);
  EXPECT_THAT(m, HasSubstr("--obstacle-x 15"));
  EXPECT_THAT(m, HasSubstr("--obstacle-x 16 or more"));
  r = FlowRequest{};
  r.obstacle_y = 4;  // reaches below row 1
  m = Refusal(r);
  EXPECT_THAT(m, HasSubstr("--obstacle-y 4"));
  EXPECT_THAT(m, HasSubstr("use --obstacle-y 5 to 58"));
  r.obstacle_y = 59;  // past row ny - 2 = 62
  EXPECT_THAT(Refusal(r), HasSubstr("use --obstacle-y 5 to 58"));
  r = FlowRequest{};
  r.obstacle_x = 230;  // the probe 3 D behind it falls off the grid
  EXPECT_THAT(Refusal(r), HasSubstr("or a smaller --obstacle-x"));
  r.obstacle_x = 1e9;
  EXPECT_THAT(Refusal(r), HasSubstr("--obstacle-x"));
}

TEST(FlowParams, RefusesBadCountsAndNames) {
  FlowRequest r;
  r.frames = 1;
  EXPECT_THAT(Refusal(r), HasSubstr("--frames"));
  r = FlowRequest{};
  r.obstacle = "triangle";
  EXPECT_THAT(Refusal(r), HasSubstr("cylinder or square"));
  r = FlowRequest{};
  r.re = -1;
  EXPECT_THAT(Refusal(r), HasSubstr("--re"));
  r = FlowRequest{};
  r.nx = 8;
  EXPECT_THAT(Refusal(r), HasSubstr("16 .. 16384"));
}

// Issue 29: --warmup-periods 1e9 would have run for hours, and larger values overflowed
// the step count to a negative number (llround out of range). Every count is bounded
// before it is rounded to an integer.
TEST(FlowParams, ACaseThatWouldRunForHoursOrOverflowIsRefusedBeforeItStarts) {
  FlowRequest r;
  r.warmup_periods = 1e9;
  EXPECT_THAT(Refusal(r), HasSubstr("--warmup-periods: bad value '1e+09' (a number in [0, 10000])"));
  r.warmup_periods = 1e300;
  EXPECT_THAT(Refusal(r), HasSubstr("--warmup-periods"));
  r.warmup_periods = 10000;  // in range, but 4e6 steps on 256x64 cells: 6.6e10 updates, fine
  EXPECT_TRUE(ResolveFlow(r).ok());
  r.nx = r.ny = 16384;       // the largest grid: 1.1e15 updates, about 3000 hours
  r.diameter = 8;
  EXPECT_THAT(Refusal(r), HasSubstr("lattice updates"));
  // One more of the class: recorded steps rather than the warm-up.
  r = FlowRequest{};
  r.frames = 1'000'000;
  r.every = 1'000'000;
  EXPECT_THAT(Refusal(r), HasSubstr("lower --warmup-periods, --frames or --every"));
  r = FlowRequest{};
  r.every = 1'000'001;
  EXPECT_THAT(Refusal(r), HasSubstr("--every: bad value '1000001' (an integer in [0, 1000000])"));
  r = FlowRequest{};
  r.re = 1e300;
  EXPECT_THAT(Refusal(r), HasSubstr("--re: bad value"));
  r = FlowRequest{};
  r.frames = 2000000;
  EXPECT_THAT(Refusal(r), HasSubstr("--frames: bad value '2000000'"));
}

}  // namespace
}  // namespace gantry::flow
