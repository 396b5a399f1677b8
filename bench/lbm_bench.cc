// LBM step throughput: the fused one-pass step (worker/flow/fused_step.h, what make-flow
// runs) against the straightforward three-pass reference (stream, edges, collide;
// worker/flow/reference_step.h), in million lattice-cell updates per second on one core,
// for a few grid sizes of the make-flow set-up (cylinder D = ny/8, inlet and outflow):
// from one that fits in L2 (256x64: 1.2 MB of populations) to one that does not fit in
// L3 (2048x512: 75 MB), where the two extra passes over memory cost the most.
//   gantry-bench-lbm [--seconds S]
#include <cstdio>
#include <utility>

#include "CLI/CLI.hpp"
#include "common/clock.h"
#include "worker/flow/fused_step.h"
#include "worker/flow/obstacle.h"
#include "worker/flow/reference_step.h"

namespace gantry::flow {
namespace {

Domain CylinderDomain(int nx, int ny) {
  Domain d;
  d.nx = nx;
  d.ny = ny;
  d.edges.inlet_ux = 0.1f;
  d.solid = RasteriseObstacle({ObstacleKind::kCylinder, nx / 5.0, ny / 2.0, ny / 8.0}, nx, ny);
  return d;
}

// Steps `step` until `seconds` have passed (after a warm-up step); MLUPS.
template <typename StepFn>
double Measure(const Domain& d, double seconds, StepFn step) {
  Populations a(d.nx, d.ny), b(d.nx, d.ny);
  a.FillEquilibrium(1.f, d.edges.inlet_ux, 0.f);
  step(a, &b);
  const Clock& clock = Clock::Real();
  const double start = clock.NowSeconds();
  int64_t steps = 0;
  while (clock.NowSeconds() - start < seconds) {
    for (int k = 0; k < 10; ++k) {
      step(a, &b);
      std::swap(a, b);
    }
    steps += 10;
  }
  return static_cast<double>(steps) * d.nx * d.ny / (clock.NowSeconds() - start) * 1e-6;
}

}  // namespace
}  // namespace gantry::flow

int main(int argc, char** argv) {
  using namespace gantry::flow;
  CLI::App app{"LBM D2Q9 step throughput: fused one-pass vs the three-pass reference (one core)"};
  double seconds = 1.0;
  app.add_option("--seconds", seconds, "time per measurement [default: 1]");
  CLI11_PARSE(app, argc, argv);
  const float omega = 1 / 0.524f;
  std::printf("| grid | cells | reference MLUPS | fused MLUPS | speed-up |\n|---|---|---|---|---|\n");
  for (const auto& [nx, ny] : {std::pair{256, 64}, std::pair{512, 128}, std::pair{1024, 256}, std::pair{2048, 512}}) {
    const Domain d = CylinderDomain(nx, ny);
    const FusedStepper fused(d);
    const ReferenceStepper reference(d);
    const double ref = Measure(d, seconds, [&](const Populations& in, Populations* out) {
      reference.Step(omega, BodyForce{}, in, out);
    });
    const double fast = Measure(d, seconds, [&](const Populations& in, Populations* out) {
      fused.Step(omega, BodyForce{}, in, out);
    });
    std::printf("| %dx%d | %d | %.1f | %.1f | %.1fx |\n", nx, ny, nx * ny, ref, fast, fast / ref);
    std::fflush(stdout);
  }
  return 0;
}
