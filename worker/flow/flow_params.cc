#include "worker/flow/flow_params.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace gantry::flow {
namespace {

absl::Status Refuse(const std::string& message) { return absl::InvalidArgumentError(message); }

// The settings that stand on their own: the grid, Re, the frames and their spacing, the
// warm-up.
absl::Status CheckRecording(const FlowRequest& r) {
  if (r.nx < 16 || r.nx > 16384 || r.ny < 16 || r.ny > 16384) {
    return Refuse(absl::StrFormat("grid %dx%d: nx and ny must each be 16 .. 16384 cells", r.nx, r.ny));
  }
  if (!(r.re > 0) || !std::isfinite(r.re)) {
    return Refuse(absl::StrFormat("--re %g: the Reynolds number must be positive (e.g. 100)", r.re));
  }
  if (r.re > kReRange.hi) return CheckRealIn("--re", r.re, kReRange);
  if (r.frames < 2) return Refuse(absl::StrFormat("--frames %d: record at least 2 frames", r.frames));
  RETURN_IF_ERROR(CheckIntIn("--frames", r.frames, kFramesRange));
  if (r.every < 0) return Refuse(absl::StrFormat("--every %d: give a positive step count, or 0 for the default", r.every));
  RETURN_IF_ERROR(CheckIntIn("--every", r.every, kEveryRange));
  if (!(r.warmup_periods >= 0) || !std::isfinite(r.warmup_periods)) {
    return Refuse(absl::StrFormat("--warmup-periods %g: give 0 or more shedding periods", r.warmup_periods));
  }
  RETURN_IF_ERROR(CheckRealIn("--warmup-periods", r.warmup_periods, kWarmupPeriodsRange));
  RETURN_IF_ERROR(CheckRealIn("--obstacle-x", r.obstacle_x, kObstaclePositionRange));
  RETURN_IF_ERROR(CheckRealIn("--obstacle-y", r.obstacle_y, kObstaclePositionRange));
  return CheckRealIn("--diameter", r.diameter, kDiameterRange);
}

// The obstacle's size (r.diameter, its default filled in) and the inlet velocity.
absl::Status CheckObstacleAndInlet(const FlowRequest& r) {
  const double d = r.diameter, u = r.u_lattice;
  if (!(d >= kMinDiameter) || !std::isfinite(d)) {
    return Refuse(absl::StrFormat(
        "--diameter %g: too few cells across the obstacle (at least %g): a staircase that coarse does not give the "
        "right wake; use --diameter 8 or more and a grid to match (ny >= 4 D)",
        d, kMinDiameter));
  }
  if (!(u > 0) || !std::isfinite(u)) {
    return Refuse(absl::StrFormat("--u-lattice %g: the inlet velocity must be positive (e.g. 0.1)", u));
  }
  if (u > kMaxULattice) {
    return Refuse(absl::StrFormat(
        "--u-lattice %g: Mach %.2f is too close to the lattice sound speed (1/sqrt(3) = 0.577): compressibility "
        "errors grow as Mach^2 and BGK goes unstable; use --u-lattice %g or less (keep Re by raising --diameter)",
        u, u * std::sqrt(3.0), kMaxULattice));
  }
  return absl::OkStatus();
}

// BGK's stability and accuracy at the viscosity s.nu gives (tau and the cell Reynolds
// number), and the share of the channel the obstacle blocks.
absl::Status CheckStability(const FlowSetup& s) {
  const FlowRequest& r = s.request;
  const double d = r.diameter, u = r.u_lattice;
  const double min_d_for_tau = (kMinTau - 0.5) / 3.0 * r.re / u;
  if (s.tau < kMinTau) {
    return Refuse(absl::StrFormat(
        "tau = %.4f is too close to 0.5 (nu = U D / Re = %.2e): BGK is unstable there; raise --diameter to %.0f "
        "or more, or --u-lattice, or lower --re",
        s.tau, s.nu, std::ceil(min_d_for_tau)));
  }
  if (s.cell_reynolds() > kMaxCellReynolds) {
    return Refuse(absl::StrFormat(
        "the cell Reynolds number U/nu = Re/D = %.1f is above %g: the grid does not resolve the boundary layer "
        "and BGK goes unstable; use --diameter %.0f or more (and a grid to match), or a lower --re",
        s.cell_reynolds(), kMaxCellReynolds, std::ceil(r.re / kMaxCellReynolds)));
  }
  if (s.tau > kMaxTau) {
    return Refuse(absl::StrFormat(
        "tau = %.3f is above %g (nu = %.3f): BGK's errors grow with tau; lower --u-lattice or --diameter, or raise --re",
        s.tau, kMaxTau, s.nu));
  }
  if (d / r.ny > kMaxBlockage) {
    return Refuse(absl::StrFormat(
        "--diameter %g fills %.0f%% of ny = %d (at most %.0f%%): the sides would dominate the wake; use --ny %.0f or "
        "more, or a smaller --diameter",
        d, 100 * d / r.ny, r.ny, 100 * kMaxBlockage, std::ceil(d / kMaxBlockage)));
  }
  return absl::OkStatus();
}

// A placed obstacle's distance from the inlet: the uniform inlet profile is imposed at
// x = 0, and an obstacle closer than this blocks it (the default keeps to it too).
constexpr double kMinInletGapDiameters = 2;

// Where --obstacle-x / --obstacle-y put the centre (each checked only when given): at least 2 D from
// the inlet, and the whole obstacle inside the rows (the sides are periodic, but the
// raster does not wrap).
absl::Status CheckPlacement(const FlowRequest& r) {
  const double d = r.diameter, cy = r.obstacle_y;
  if (r.obstacle_x > 0 && r.obstacle_x < kMinInletGapDiameters * d) {
    return Refuse(absl::StrFormat(
        "--obstacle-x %g: the obstacle's centre must be at least %g D = %g cells from the inlet, or it blocks the "
        "uniform inlet profile; use --obstacle-x %.0f or more (or 0 for the default, nx / 5)",
        r.obstacle_x, kMinInletGapDiameters, kMinInletGapDiameters * d, std::ceil(kMinInletGapDiameters * d)));
  }
  if (cy > 0 && (cy - d / 2 < 1 || cy + d / 2 > r.ny - 2)) {
    return Refuse(absl::StrFormat(
        "--obstacle-y %g: an obstacle of %g cells there reaches past the rows 1 .. %d; use --obstacle-y %.0f to %.0f "
        "(or 0 for the middle row)",
        r.obstacle_y, d, r.ny - 2, std::ceil(1 + d / 2), std::floor(r.ny - 2 - d / 2)));
  }
  return absl::OkStatus();
}

// Geometry: the obstacle where --obstacle-x / -y put it, by default a fifth of the way
// in (at least 2 D from the inlet) on the middle row; the probe 3 D behind it on the same
// row, which must fit in the grid.
absl::Status PlaceObstacle(ObstacleKind kind, FlowSetup& s) {
  const FlowRequest& r = s.request;
  const double d = r.diameter;
  s.obstacle.kind = kind;
  s.obstacle.diameter = d;
  s.obstacle.cx = r.obstacle_x > 0 ? r.obstacle_x : std::max(std::round(r.nx / 5.0), std::ceil(kMinInletGapDiameters * d));
  s.obstacle.cy = r.obstacle_y > 0 ? r.obstacle_y : r.ny / 2;
  RETURN_IF_ERROR(CheckPlacement(r));
  s.probe_x = static_cast<int>(std::lround(s.obstacle.cx + 3 * d));
  s.probe_y = static_cast<int>(s.obstacle.cy);
  if (s.probe_x + d > r.nx - 2) {
    return Refuse(absl::StrFormat(
        "--nx %d is too short for an obstacle of %g cells: it sits at x = %g and the wake probe 3 D behind it; use "
        "--nx %.0f or more%s",
        r.nx, d, s.obstacle.cx, std::ceil((s.probe_x + d + 2) * 1.25),
        r.obstacle_x > 0 ? ", or a smaller --obstacle-x" : ""));
  }
  return absl::OkStatus();
}

// The frame spacing (--every, or a twentieth of the estimated shedding period) and the
// warm-up steps; the frames must fit in kMaxFrameBytes.
// The step counts are worked out in double and bounded (kMaxLatticeUpdates) before any
// is rounded to an integer, so no setting overflows them.
absl::Status Schedule(FlowSetup& s) {
  FlowRequest& r = s.request;
  s.estimated_period = r.diameter / (kStrouhalGuess * r.u_lattice);
  const double every = r.every > 0 ? r.every : std::max(1.0, std::round(s.estimated_period / 20));
  const double warmup = std::round(r.warmup_periods * s.estimated_period);
  if (every > kEveryRange.hi) {
    return Refuse(absl::StrFormat("the estimated shedding period of %.3g steps (D / (0.2 U)) spaces the frames %.3g "
                                  "steps apart, more than %d: raise --u-lattice or lower --diameter, or give --every",
                                  s.estimated_period, every, kEveryRange.hi));
  }
  const double updates = (warmup + (r.frames - 1) * every) * r.nx * r.ny;
  if (!(updates <= kMaxLatticeUpdates)) {
    return Refuse(absl::StrFormat(
        "%g warm-up periods of %.0f steps and %d frames every %.0f steps on %dx%d cells are %.3g lattice updates "
        "(about %.0f hours at 100 MLUPS), more than the %g a case may take: lower --warmup-periods, --frames or "
        "--every, or the grid",
        r.warmup_periods, s.estimated_period, r.frames, every, r.nx, r.ny, updates, updates / 1e8 / 3600,
        kMaxLatticeUpdates));
  }
  s.every = static_cast<int>(every);  // at most kEveryRange.hi: inside int
  r.every = s.every;
  s.warmup_steps = static_cast<int64_t>(warmup);
  const int64_t frame_bytes = int64_t{r.frames} * 3 * r.nx * r.ny * 4;
  if (frame_bytes > kMaxFrameBytes) {
    return Refuse(absl::StrFormat(
        "%d frames of %dx%d are %.1f GiB (at most %.0f): record fewer --frames, or split them over cases",
        r.frames, r.nx, r.ny, frame_bytes / double(int64_t{1} << 30), kMaxFrameBytes / double(int64_t{1} << 30)));
  }
  return absl::OkStatus();
}

}  // namespace

double FlowSetup::mach() const { return request.u_lattice * std::sqrt(3.0); }
double FlowSetup::cell_reynolds() const { return request.u_lattice / nu; }

absl::StatusOr<FlowSetup> ResolveFlow(const FlowRequest& given) {
  FlowSetup s;
  FlowRequest& r = s.request;
  r = given;
  RETURN_IF_ERROR(CheckRecording(r));
  absl::StatusOr<ObstacleKind> kind = ParseObstacleKind(r.obstacle);
  if (!kind.ok()) return kind.status();
  if (r.diameter == 0) r.diameter = std::max(8, static_cast<int>(std::lround(r.ny / 8.0)));
  RETURN_IF_ERROR(CheckObstacleAndInlet(r));
  s.nu = r.u_lattice * r.diameter / r.re;
  s.tau = 0.5 + 3.0 * s.nu;
  s.omega = 1.0 / s.tau;
  RETURN_IF_ERROR(CheckStability(s));
  RETURN_IF_ERROR(PlaceObstacle(*kind, s));
  RETURN_IF_ERROR(Schedule(s));
  return s;
}

}  // namespace gantry::flow
