// The D2Q9 lattice: its nine velocities and weights, BGK equilibrium and collision for
// one cell, and the population storage of a whole grid (structure of arrays).
//
// Units are lattice units: dx = dt = 1, sound speed c_s = 1/sqrt(3), kinematic
// viscosity nu = (tau - 1/2) / 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gantry::flow {

inline constexpr int kQ = 9;
// Direction order: rest, E, N, W, S, NE, NW, SW, SE.
inline constexpr int kCx[kQ] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
inline constexpr int kCy[kQ] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
inline constexpr int kOpposite[kQ] = {0, 3, 4, 1, 2, 7, 8, 5, 6};
inline constexpr float kW[kQ] = {4.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36};

// STORED POPULATIONS ARE SHIFTED: every array here holds f_i - w_i, the deviation from
// the rest state (rho = 1, u = 0), so the sum of the shifted equilibrium is rho - 1.
// The deviations are ~0.01 where f_i is ~0.1 - 0.45, so float rounding of the stored
// values is an order of magnitude smaller (what keeps the mass drift of a 4000-step
// periodic run at rounding level, tests/flow/lbm_physics_test.cc). Streaming and
// bounce-back commute with the shift (w_i = w_opposite(i)), so only the moments,
// equilibria and the inlet's density see it.

// Shifted equilibrium populations (feq_i - w_i) for density rho and velocity (ux, uy),
// second order in u.
inline void Equilibrium(float rho, float ux, float uy, float feq[kQ]) {
  const float usq = 1.5f * (ux * ux + uy * uy);
#pragma GCC unroll 9
  for (int i = 0; i < kQ; ++i) {
    const float cu = 3.f * (kCx[i] * ux + kCy[i] * uy);
    feq[i] = kW[i] * ((rho - 1.f) + rho * (cu + 0.5f * cu * cu - usq));
  }
}

// A uniform body force (per unit volume) applied with Guo's forcing scheme; zero in the
// wake generator, used to drive channel flow in the tests.
struct BodyForce {
  float fx = 0;
  float fy = 0;
  bool active() const { return fx != 0 || fy != 0; }
};

// BGK collision of one cell's (shifted) pre-collision populations `f` in place: relaxes towards
// the equilibrium at rate omega = 1/tau. With kForce, Guo's source term is added and
// the equilibrium uses the half-step velocity u = (sum f c + F/2) / rho. Written so the
// loop over cells that calls it vectorises (no branches, fixed trip counts).
template <bool kForce>
inline void CollideBgk(float f[kQ], float omega, BodyForce force) {
  float drho = 0, mx = 0, my = 0;
#pragma GCC unroll 9
  for (int i = 0; i < kQ; ++i) {
    drho += f[i];
    mx += kCx[i] * f[i];
    my += kCy[i] * f[i];
  }
  if constexpr (kForce) {
    mx += 0.5f * force.fx;
    my += 0.5f * force.fy;
  }
  const float rho = 1.f + drho;
  const float inv_rho = 1.f / rho;
  const float ux = mx * inv_rho, uy = my * inv_rho;
  const float usq = 1.5f * (ux * ux + uy * uy);
#pragma GCC unroll 9
  for (int i = 0; i < kQ; ++i) {
    const float cu = 3.f * (kCx[i] * ux + kCy[i] * uy);
    const float feq = kW[i] * (drho + rho * (cu + 0.5f * cu * cu - usq));
    f[i] += omega * (feq - f[i]);
    if constexpr (kForce) {
      // Guo et al. (2002): (1 - omega/2) w_i [3 (c - u) + 9 (c.u) c] . F
      const float cx = kCx[i], cy = kCy[i];
      const float cdotu = cx * ux + cy * uy;
      const float sx = 3.f * (cx - ux) + 9.f * cdotu * cx;
      const float sy = 3.f * (cy - uy) + 9.f * cdotu * cy;
      f[i] += (1.f - 0.5f * omega) * kW[i] * (sx * force.fx + sy * force.fy);
    }
  }
}

// Populations of an nx x ny grid, one contiguous plane per direction (SoA):
// f(i, x, y) = data[i * cells + y * nx + x]. The stored values are the POST-collision
// populations of the last step (the pull scheme streams them in at the next step),
// shifted by -w_i (see above): a cell at rest holds zeros.
class Populations {
 public:
  Populations(int nx, int ny) : nx_(nx), ny_(ny), data_(static_cast<size_t>(kQ) * nx * ny) {}

  int nx() const { return nx_; }
  int ny() const { return ny_; }
  int64_t cells() const { return static_cast<int64_t>(nx_) * ny_; }
  float* plane(int i) { return data_.data() + i * cells(); }
  const float* plane(int i) const { return data_.data() + i * cells(); }
  float& at(int i, int x, int y) { return data_[i * cells() + static_cast<int64_t>(y) * nx_ + x]; }
  float at(int i, int x, int y) const { return data_[i * cells() + static_cast<int64_t>(y) * nx_ + x]; }

  // Sets every cell to the equilibrium of (rho, ux, uy).
  void FillEquilibrium(float rho, float ux, float uy);
  // Sets cell (x, y) to the equilibrium of (rho, ux, uy).
  void SetEquilibrium(int x, int y, float rho, float ux, float uy);

 private:
  int nx_, ny_;
  std::vector<float> data_;
};

// Density and velocity at every cell from post-collision populations. Collision keeps
// mass and (without a force) momentum, so these are the fields of the step just taken;
// with a force the physical velocity is (sum f c - F/2) / rho (Guo). Solid cells
// (mask != 0, may be empty) get rho = 1, u = 0. Each output holds cells() values.
void ComputeMoments(const Populations& f, const std::vector<uint8_t>& solid, BodyForce force, std::vector<float>* rho,
                    std::vector<float>* ux, std::vector<float>* uy);

// Total mass (sum of the unshifted populations) over fluid cells, summed in double.
double TotalMass(const Populations& f, const std::vector<uint8_t>& solid);

}  // namespace gantry::flow
