#include "worker/flow/simulation.h"

#include <cmath>
#include <random>

#include "absl/strings/str_format.h"
#include "worker/flow/fused_step.h"

namespace gantry::flow {
namespace {

Domain MakeDomain(const FlowSetup& s) {
  Domain d;
  d.nx = s.request.nx;
  d.ny = s.request.ny;
  d.edges.x = XBoundary::kInletOutflow;
  d.edges.y = YBoundary::kPeriodic;
  d.edges.inlet_ux = static_cast<float>(s.request.u_lattice);
  d.solid = RasteriseObstacle(s.obstacle, d.nx, d.ny);
  return d;
}

void InitialState(const FlowSetup& s, const Domain& d, Populations* f) {
  const float u = static_cast<float>(s.request.u_lattice);
  std::mt19937_64 rng(s.request.seed);
  std::uniform_real_distribution<float> kick(-0.01f * u, 0.01f * u);
  for (int y = 0; y < d.ny; ++y) {
    for (int x = 0; x < d.nx; ++x) {
      const float uy = kick(rng);  // drawn for every cell, so the sequence is the grid's
      if (d.IsSolid(x, y)) {
        f->SetEquilibrium(x, y, 1.f, 0.f, 0.f);
      } else {
        f->SetEquilibrium(x, y, 1.f, u, uy);
      }
    }
  }
}

absl::Status Diverged(const FlowSetup& s, int64_t step) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "the flow diverged (NaN) at step %d of %d with tau = %.4f, Mach %.2f: lower --re or --u-lattice, or raise "
      "--diameter",
      step, s.total_steps(), s.tau, s.mach()));
}

}  // namespace

double FlowResult::mlups() const {
  return step_seconds > 0 ? static_cast<double>(steps) * (mask.size()) / step_seconds * 1e-6 : 0;
}

absl::StatusOr<FlowResult> SimulateFlow(const FlowSetup& s, const Clock& clock, const FlowProgress& progress,
                                        double progress_seconds) {
  const double start = clock.NowSeconds();
  const Domain d = MakeDomain(s);
  const int nx = d.nx, ny = d.ny;
  const int64_t plane = static_cast<int64_t>(nx) * ny;
  FlowResult out;
  out.mask.assign(d.solid.begin(), d.solid.end());
  out.frames.resize(static_cast<size_t>(s.request.frames) * kChannels * plane);
  Populations a(nx, ny), b(nx, ny);
  InitialState(s, d, &a);
  const FusedStepper stepper(d);
  const float omega = static_cast<float>(s.omega);
  const int64_t total = s.total_steps();
  double last_report = clock.NowSeconds();
  std::vector<float> rho, ux, uy;
  int frame = 0;
  for (int64_t step = 0; step <= total; ++step) {
    if (step > 0) {
      const double t0 = clock.NowSeconds();
      stepper.Step(omega, BodyForce{}, a, &b);
      std::swap(a, b);
      out.step_seconds += clock.NowSeconds() - t0;
      out.steps = step;
    }
    // A cheap divergence watch: a NaN anywhere reaches the probe's row within a few
    // hundred steps; check one population there.
    if (step % 256 == 0 && !std::isfinite(a.at(0, s.probe_x, s.probe_y))) return Diverged(s, step);
    const int64_t since = step - s.warmup_steps;
    if (since >= 0 && since % s.every == 0 && frame < s.request.frames) {
      ComputeMoments(a, d.solid, BodyForce{}, &rho, &ux, &uy);
      const std::vector<float> w = Vorticity(ux, uy, nx, ny, /*periodic_y=*/true, d.solid);
      float* dst = out.frames.data() + static_cast<int64_t>(frame) * kChannels * plane;
      std::copy(ux.begin(), ux.end(), dst);
      std::copy(uy.begin(), uy.end(), dst + plane);
      std::copy(w.begin(), w.end(), dst + 2 * plane);
      for (int64_t c = 0; c < plane; ++c) {
        if (!std::isfinite(ux[c]) || !std::isfinite(uy[c])) return Diverged(s, step);
      }
      out.probe_uy.push_back(uy[static_cast<int64_t>(s.probe_y) * nx + s.probe_x]);
      ++frame;
    }
    if (progress && clock.NowSeconds() - last_report >= progress_seconds) {
      last_report = clock.NowSeconds();
      progress(step, total, out.mlups());
    }
  }
  out.strouhal = MeasureStrouhal(out.probe_uy, s.every, s.obstacle.diameter, s.request.u_lattice);
  out.normalisation = NormalisationOf(out.frames, s.request.frames, plane);
  out.total_seconds = clock.NowSeconds() - start;
  return out;
}

}  // namespace gantry::flow
