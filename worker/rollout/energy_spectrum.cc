#include "worker/rollout/energy_spectrum.h"

#include <cmath>
#include <complex>
#include <limits>

#include "common/check.h"
#include "unsupported/Eigen/FFT"

namespace gantry {

std::vector<double> StreamwiseEnergySpectrum(const float* field, int64_t ny, int64_t nx) {
  if (nx < 2) return {};
  std::vector<double> energy(static_cast<size_t>(nx / 2), 0.0);
  Eigen::FFT<double> fft;
  std::vector<double> row(static_cast<size_t>(nx));
  std::vector<std::complex<double>> modes;
  const double norm = 0.5 / (static_cast<double>(nx) * static_cast<double>(nx));
  for (int64_t channel = 0; channel < 2; ++channel) {
    for (int64_t y = 0; y < ny; ++y) {
      const float* values = field + (channel * ny + y) * nx;
      for (int64_t x = 0; x < nx; ++x) row[x] = values[x];
      fft.fwd(modes, row);
      for (int64_t k = 1; k <= nx / 2; ++k) energy[k - 1] += norm * std::norm(modes[k]);
    }
  }
  return energy;
}

double SpectrumError(const std::vector<double>& predicted, const std::vector<double>& truth) {
  CHECK_EQ(predicted.size(), truth.size()) << "spectra of different lengths";
  double difference = 0, total = 0;
  for (size_t k = 0; k < truth.size(); ++k) {
    difference += std::abs(predicted[k] - truth[k]);
    total += truth[k];
  }
  if (total > 0) return difference / total;
  return difference > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace gantry
