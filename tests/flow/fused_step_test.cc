// The fused step against the straightforward three-pass reference: the same rules,
// written independently (per-cell pull with selects vs plane shifts with fix-up lists),
// so the populations must agree to float rounding (the vectorised loop may contract
// multiply-adds differently).
#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "worker/flow/fused_step.h"
#include "worker/flow/obstacle.h"
#include "worker/flow/reference_step.h"

namespace gantry::flow {
namespace {

double MaxDifferenceAfter(const Domain& d, BodyForce force, int steps) {
  Populations a(d.nx, d.ny), b(d.nx, d.ny);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.02f, 0.02f);
  for (int y = 0; y < d.ny; ++y) {
    for (int x = 0; x < d.nx; ++x) {
      if (d.IsSolid(x, y)) {
        a.SetEquilibrium(x, y, 1.f, 0.f, 0.f);
      } else {
        a.SetEquilibrium(x, y, 1.f, d.edges.inlet_ux + u(rng), u(rng));
      }
    }
  }
  Populations ra = a, rb = b;
  const FusedStepper stepper(d);
  const ReferenceStepper reference(d);
  for (int s = 0; s < steps; ++s) {
    stepper.Step(1 / 0.53f, force, a, &b);
    std::swap(a, b);
    reference.Step(1 / 0.53f, force, ra, &rb);
    std::swap(ra, rb);
  }
  double worst = 0;
  for (int i = 0; i < kQ; ++i) {
    for (int64_t c = 0; c < a.cells(); ++c) {
      EXPECT_TRUE(std::isfinite(a.plane(i)[c]));
      worst = std::max(worst, static_cast<double>(std::abs(a.plane(i)[c] - ra.plane(i)[c])));
    }
  }
  return worst;
}

// Populations are ~0.01 - 0.45; 300 steps of a (not yet chaotic) start-up flow keep
// rounding differences below 1e-5, while any difference in the rules shows up at 1e-3
// or more within a few steps.
TEST(FusedStep, MatchesTheReferenceWithInletOutflowAndCylinder) {
  Domain d;
  d.nx = 96;
  d.ny = 40;
  d.edges.inlet_ux = 0.08f;
  d.solid = RasteriseObstacle({ObstacleKind::kCylinder, 24, 21, 9}, d.nx, d.ny);
  EXPECT_LT(MaxDifferenceAfter(d, BodyForce{}, 300), 1e-5);
}

TEST(FusedStep, MatchesTheReferenceWithWallsForceAndSquare) {
  Domain d;
  d.nx = 50;
  d.ny = 30;
  d.edges.x = XBoundary::kPeriodic;
  d.edges.y = YBoundary::kWalls;
  d.solid = RasteriseObstacle({ObstacleKind::kSquare, 20, 10, 7}, d.nx, d.ny);
  EXPECT_LT(MaxDifferenceAfter(d, BodyForce{2e-5f, 0.f}, 300), 1e-5);
}

TEST(FusedStep, MatchesTheReferenceWithAnObstacleAcrossThePeriodicSeam) {
  Domain d;
  d.nx = 40;
  d.ny = 33;
  d.edges.x = XBoundary::kPeriodic;
  d.edges.y = YBoundary::kPeriodic;
  d.solid = RasteriseObstacle({ObstacleKind::kCylinder, 20, 0, 8}, d.nx, d.ny);  // cut by y = 0
  EXPECT_LT(MaxDifferenceAfter(d, BodyForce{}, 300), 1e-5);
}

}  // namespace
}  // namespace gantry::flow
