#include "worker/flow/lattice.h"

namespace gantry::flow {

void Populations::FillEquilibrium(float rho, float ux, float uy) {
  for (int y = 0; y < ny_; ++y) {
    for (int x = 0; x < nx_; ++x) SetEquilibrium(x, y, rho, ux, uy);
  }
}

void Populations::SetEquilibrium(int x, int y, float rho, float ux, float uy) {
  float feq[kQ];
  Equilibrium(rho, ux, uy, feq);
  for (int i = 0; i < kQ; ++i) at(i, x, y) = feq[i];
}

void ComputeMoments(const Populations& f, const std::vector<uint8_t>& solid, BodyForce force, std::vector<float>* rho,
                    std::vector<float>* ux, std::vector<float>* uy) {
  const int64_t n = f.cells();
  rho->assign(n, 1.f);
  ux->assign(n, 0.f);
  uy->assign(n, 0.f);
  for (int64_t c = 0; c < n; ++c) {
    if (!solid.empty() && solid[c]) continue;
    float r = 1.f, mx = 0, my = 0;  // shifted populations: rho = 1 + sum
    for (int i = 0; i < kQ; ++i) {
      const float v = f.plane(i)[c];
      r += v;
      mx += kCx[i] * v;
      my += kCy[i] * v;
    }
    (*rho)[c] = r;
    (*ux)[c] = (mx - 0.5f * force.fx) / r;
    (*uy)[c] = (my - 0.5f * force.fy) / r;
  }
}

double TotalMass(const Populations& f, const std::vector<uint8_t>& solid) {
  double total = 0;
  for (int64_t c = 0; c < f.cells(); ++c) {
    if (!solid.empty() && solid[c]) continue;
    total += 1.0;  // the weights' sum
    for (int i = 0; i < kQ; ++i) total += f.plane(i)[c];
  }
  return total;
}

}  // namespace gantry::flow
