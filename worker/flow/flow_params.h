// What a make-flow case asks for, the defaults that fill the gaps, and the rules that
// refuse settings BGK cannot run stably or accurately, each with its reason and fix.
//
// Re is defined on the obstacle: Re = U D / nu, with U the (uniform) inlet velocity and
// D the cylinder diameter or the square's side, all in lattice units.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/bounded_number.h"
#include "worker/flow/obstacle.h"

namespace gantry::flow {

// The limits the checks enforce (lattice units).
inline constexpr double kMinTau = 0.505;  // tau below this: BGK blows up
inline constexpr double kMaxTau = 2.0;           // above: BGK's wall and time errors grow
inline constexpr double kMaxULattice = 0.17;     // Mach U/c_s = U sqrt(3) <= 0.3
inline constexpr double kMaxCellReynolds = 20;   // U * 1 cell / nu = Re / D
inline constexpr double kMinDiameter = 6;        // cells across the obstacle
inline constexpr double kMaxBlockage = 0.25;     // D / ny
inline constexpr int64_t kMaxFrameBytes = int64_t{4} << 30;
// The most lattice-cell updates a case may take, (warm-up + recorded steps) x nx x ny:
// about 5.5 hours at 100 MLUPS, far beyond any case gantry's flow tests or docs use.
inline constexpr double kMaxLatticeUpdates = 2e12;

// The ranges of make-flow's numbers, for its flags and its case files alike; the physics
// checks below then refuse what BGK cannot run (with the reason), inside these.
inline constexpr IntRange kGridRange{16, 16384};  // --nx, --ny
inline constexpr IntRange kFramesRange{2, 1'000'000};
inline constexpr IntRange kEveryRange{0, 1'000'000};  // 0: the default spacing
inline constexpr RealRange kReRange{0, 1e7, /*lo_open=*/true};
inline constexpr RealRange kDiameterRange{0, 16384};  // 0: the default
inline constexpr RealRange kObstaclePositionRange{0, 16384};  // --obstacle-x, -y; 0: the default
inline constexpr RealRange kULatticeRange{0, 1, /*lo_open=*/true};
inline constexpr RealRange kWarmupPeriodsRange{0, 10000};
inline constexpr RealRange kProgressSecondsRange{0.1, 86400};
// The shedding period is estimated as D / (St U) with this St to size defaults; the
// measured St is what flow.json reports.
inline constexpr double kStrouhalGuess = 0.2;

// As given: 0 (or a negative seed never given) means "use the default".
struct FlowRequest {
  int nx = 256;
  int ny = 64;
  double re = 100;
  int frames = 200;
  int every = 0;            // 0: about a twentieth of the estimated shedding period
  std::string obstacle = "cylinder";
  double diameter = 0;      // 0: ny / 8, at least 8
  double obstacle_x = 0;    // the centre's cells from the inlet; 0: nx / 5, at least 2 D
  double obstacle_y = 0;    // the centre's cells from the bottom row; 0: ny / 2
  double u_lattice = 0.1;
  double warmup_periods = 10;
  uint64_t seed = 1;
};

// Everything a simulation needs, resolved and checked.
struct FlowSetup {
  FlowRequest request;  // with the defaults filled in
  Obstacle obstacle;
  double nu = 0, tau = 0, omega = 0;
  double estimated_period = 0;  // steps, D / (kStrouhalGuess U)
  int64_t warmup_steps = 0;
  int every = 0;
  int probe_x = 0, probe_y = 0;  // uy sampled here: on the obstacle's row, 3 D downstream

  int64_t total_steps() const { return warmup_steps + static_cast<int64_t>(request.frames - 1) * every; }
  double mach() const;
  double cell_reynolds() const;
};

// Fills the defaults and applies the checks. INVALID_ARGUMENT names the setting, the
// reason and the fix, e.g. "tau = 0.503 is too close to 0.5 (...): ...".
absl::StatusOr<FlowSetup> ResolveFlow(const FlowRequest& request);

}  // namespace gantry::flow
