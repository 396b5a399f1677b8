// Physics checks of the D2Q9 solver: mass conservation, channel flow against the
// analytic Poiseuille profile, and the shedding frequency of a cylinder at Re 100.
#include <cmath>
#include <random>

#include "common/clock.h"
#include "gtest/gtest.h"
#include "worker/flow/fused_step.h"
#include "worker/flow/obstacle.h"
#include "worker/flow/simulation.h"

namespace gantry::flow {
namespace {

struct MassDrift {
  double worst_step = 0;  // largest relative change in one step
  double total = 0;       // relative change over all steps
};

// A periodic box with a random (seeded) velocity field, optionally with a cylinder.
MassDrift MeasureMassDrift(bool with_obstacle, int steps) {
  Domain d;
  d.nx = 64;
  d.ny = 48;
  d.edges.x = XBoundary::kPeriodic;
  d.edges.y = YBoundary::kPeriodic;
  if (with_obstacle) d.solid = RasteriseObstacle({ObstacleKind::kCylinder, 20, 24, 10}, d.nx, d.ny);
  Populations a(d.nx, d.ny), b(d.nx, d.ny);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (int y = 0; y < d.ny; ++y) {
    for (int x = 0; x < d.nx; ++x) a.SetEquilibrium(x, y, 1.f + 0.1f * u(rng), 0.05f + u(rng), u(rng));
  }
  const double start = TotalMass(a, d.solid);
  double previous = start;
  MassDrift drift;
  const FusedStepper stepper(d);
  for (int s = 0; s < steps; ++s) {
    stepper.Step(1 / 0.55f, BodyForce{}, a, &b);
    std::swap(a, b);
    const double now = TotalMass(a, d.solid);
    drift.worst_step = std::max(drift.worst_step, std::abs(now - previous) / start);
    previous = now;
  }
  drift.total = std::abs(previous - start) / start;
  std::printf("mass drift: worst step %.2e, total %.2e (relative) over %d steps\n", drift.worst_step, drift.total, steps);
  return drift;
}

// Periodic streaming only permutes the stored floats and half-way bounce-back returns
// every population that hits the obstacle to the cell it came from, so the only change
// of the total is the float rounding of the collision, small because the stored
// populations are deviations from the rest weights (lattice.h): measured ~3e-10
// relative per step and 3e-9 - 6e-9 over 4000 steps (unshifted storage drifted 5e-5).
// A leak at the obstacle would lose O(U) per surface cell and step: ~1e-4 relative in
// ONE step here. Hence: under 1e-8 in every step and 1e-6 in all.
TEST(LbmPhysics, PeriodicBoxConservesMass) {
  const MassDrift drift = MeasureMassDrift(false, 4000);
  EXPECT_LT(drift.worst_step, 1e-8);
  EXPECT_LT(drift.total, 1e-6);
}
TEST(LbmPhysics, PeriodicBoxWithObstacleConservesMass) {
  const MassDrift drift = MeasureMassDrift(true, 4000);
  EXPECT_LT(drift.worst_step, 1e-8);
  EXPECT_LT(drift.total, 1e-6);
}

// Max |u - u_exact| / u_max over the channel's width after the flow has settled.
double PoiseuilleError(float tau) {
  Domain d;
  d.nx = 8;
  d.ny = 32;
  d.edges.x = XBoundary::kPeriodic;
  d.edges.y = YBoundary::kWalls;
  const float nu = (tau - 0.5f) / 3.f;
  const BodyForce force{1e-5f, 0.f};
  Populations a(d.nx, d.ny), b(d.nx, d.ny);
  a.FillEquilibrium(1.f, 0.f, 0.f);
  const FusedStepper stepper(d);
  // The slowest mode decays as exp(-pi^2 nu t / H^2): 12 H^2 / (pi^2 nu) steps leave
  // e^-12 = 6e-6 of the start-up transient.
  const int steps = static_cast<int>(12.0 * d.ny * d.ny / (M_PI * M_PI * nu));
  for (int s = 0; s < steps; ++s) {
    stepper.Step(1 / tau, force, a, &b);
    std::swap(a, b);
  }
  std::vector<float> rho, ux, uy;
  ComputeMoments(a, {}, force, &rho, &ux, &uy);
  // Walls half a cell outside rows 0 and ny-1: u(y) = F / (2 nu) (y + 1/2) (H - 1/2 - y).
  const double h = d.ny, u_max = force.fx * h * h / (8 * nu);
  double worst = 0;
  for (int y = 0; y < d.ny; ++y) {
    const double exact = force.fx / (2 * nu) * (y + 0.5) * (h - 0.5 - y);
    worst = std::max(worst, std::abs(ux[static_cast<size_t>(y) * d.nx + 3] - exact) / u_max);
  }
  std::printf("tau %.4f: max |u - u_poiseuille| / u_max = %.2e after %d steps\n", tau, worst, steps);
  return worst;
}

// Force-driven channel (Guo forcing, half-way bounce-back walls) against the analytic
// parabola. LBM reproduces a parabola exactly in the bulk; what remains is the slip of
// the bounce-back wall, which for BGK depends on tau, vanishes at
// tau = 1/2 + sqrt(3/16) ~ 0.933 and shrinks as 1/H^2 elsewhere. Measured for H = 32:
// 2.4e-5 of u_max at tau 0.933 (float rounding and the leftover transient), 0.11 % at
// 0.6 and 0.16 % at 1.2. Bounds: 1e-4 at 0.933, 0.5 % elsewhere. A wall half a cell off
// on each side (the classic bounce-back mistake) changes the width by one cell and
// u_max by 2/H = 6 %.
TEST(LbmPhysics, ChannelFlowMatchesPoiseuille) {
  EXPECT_LT(PoiseuilleError(0.9330127f), 1e-4);
  for (const float tau : {0.6f, 1.2f}) EXPECT_LT(PoiseuilleError(tau), 5e-3) << "tau " << tau;
}

// Re = 100 cylinder. Reference: St = 0.164 for an UNCONFINED cylinder at Re 100
// (Williamson 1996, Annu. Rev. Fluid Mech. 28, as quoted in the project's flow notes).
// This domain is not unconfined: periodic sides at D/H = 1/8 (blockage 12.5 %) and a
// velocity inlet 4.75 D upstream, and confinement raises St (the walled Schaefer-Turek
// channel at blockage 0.24 gives 0.30). So the check is St in [0.164, 0.19]: above
// the unconfined value and at most 16 % over it. Our own domain study (make-flow,
// D = 12 - 20, Mach 0.09 - 0.17) gave 0.183 at blockage 1/8, 0.176 - 0.178 at 1/16 and
// 1/32. Slow-ish: about 3 s on one core.
TEST(LbmPhysics, CylinderAtRe100ShedsAtTheLiteratureStrouhal) {
  FlowRequest r;
  r.nx = 288;
  r.ny = 96;
  r.diameter = 12;
  r.re = 100;
  r.u_lattice = 0.1;
  r.frames = 300;
  r.every = 20;
  r.warmup_periods = 15;
  absl::StatusOr<FlowSetup> setup = ResolveFlow(r);
  ASSERT_TRUE(setup.ok()) << setup.status();
  absl::StatusOr<FlowResult> result = SimulateFlow(*setup, Clock::Real(), nullptr, 1e9);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->strouhal.found) << result->strouhal.why_not;
  EXPECT_GE(result->strouhal.periods, 5);
  EXPECT_GE(result->strouhal.strouhal, 0.164);
  EXPECT_LE(result->strouhal.strouhal, 0.19);
  std::printf("St = %.4f over %d periods (reference 0.164 unconfined)\n", result->strouhal.strouhal,
              result->strouhal.periods);
}

}  // namespace
}  // namespace gantry::flow
