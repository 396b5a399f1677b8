// The streamwise energy spectrum of rollouts (worker/rollout/energy_spectrum.h) against
// closed forms: a sine of wavenumber k0 along x puts all its energy at k0.
#include "worker/rollout/energy_spectrum.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "gtest/gtest.h"

namespace gantry {
namespace {

// Planes ux, uy, vorticity of ny x nx: ux = mean + amplitude sin(2 pi k0 x / nx), uy = 0.
std::vector<float> Sine(int64_t ny, int64_t nx, int64_t k0, double amplitude, double mean = 0.1) {
  std::vector<float> field(static_cast<size_t>(3 * ny * nx), 0.0f);
  for (int64_t y = 0; y < ny; ++y) {
    for (int64_t x = 0; x < nx; ++x) {
      field[y * nx + x] = static_cast<float>(mean + amplitude * std::sin(2 * std::numbers::pi * k0 * x / nx));
    }
  }
  return field;
}

TEST(EnergySpectrum, ASineHasAllItsEnergyAtItsWavenumber) {
  const int64_t ny = 5, nx = 48;  // not a power of two: the FFT takes any length
  const std::vector<double> e = StreamwiseEnergySpectrum(Sine(ny, nx, 6, 0.02).data(), ny, nx);
  ASSERT_EQ(e.size(), 24u);
  // |FFT(A sin)(k0)| = A nx / 2, so E(k0) = ny (1/2) (A / 2)^2 = ny A^2 / 8; the mean adds nothing.
  EXPECT_NEAR(e[5], ny * 0.02 * 0.02 / 8, 1e-9);
  for (size_t k = 0; k < e.size(); ++k) {
    if (k != 5) EXPECT_LT(e[k], 1e-12) << "k = " << k + 1;
  }
  EXPECT_TRUE(StreamwiseEnergySpectrum(Sine(ny, 1, 0, 0).data(), ny, 1).empty());
}

TEST(EnergySpectrum, TheErrorIsTheEnergyDifferenceOverTheTruths) {
  const int64_t ny = 4, nx = 32;
  const std::vector<double> truth = StreamwiseEnergySpectrum(Sine(ny, nx, 3, 0.02).data(), ny, nx);
  EXPECT_NEAR(SpectrumError(truth, truth), 0.0, 1e-12);
  const std::vector<double> louder = StreamwiseEnergySpectrum(Sine(ny, nx, 3, 0.02 * std::sqrt(2.0)).data(), ny, nx);
  EXPECT_NEAR(SpectrumError(louder, truth), 1.0, 1e-6);  // twice the energy
  const std::vector<double> elsewhere = StreamwiseEnergySpectrum(Sine(ny, nx, 9, 0.02).data(), ny, nx);
  EXPECT_NEAR(SpectrumError(elsewhere, truth), 2.0, 1e-6);  // the same energy at another scale
  const std::vector<double> calm = StreamwiseEnergySpectrum(Sine(ny, nx, 3, 0.0).data(), ny, nx);
  EXPECT_NEAR(SpectrumError(calm, truth), 1.0, 1e-6);
  EXPECT_EQ(SpectrumError(calm, calm), 0.0);
  EXPECT_TRUE(std::isinf(SpectrumError(truth, calm)));
}

}  // namespace
}  // namespace gantry
