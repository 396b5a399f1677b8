#include "worker/infer/strouhal.h"

#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::StatusOr<double> DominantFrequency(const std::vector<double>& signal) {
  const auto n = static_cast<int64_t>(signal.size());
  if (n < 8) {
    return absl::FailedPreconditionError(absl::StrCat("a probe signal of ", n, " samples is too short for a frequency; "
                                                      "roll out more steps"));
  }
  double mean = 0;
  for (double v : signal) mean += v;
  mean /= static_cast<double>(n);
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) {
    const double hann = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n - 1));
    x[i] = (signal[i] - mean) * hann;
  }
  std::vector<double> magnitude(n / 2 + 1, 0.0);
  for (int64_t k = 1; k <= n / 2; ++k) {
    double re = 0, im = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double phase = 2 * std::numbers::pi * static_cast<double>(k * i % n) / static_cast<double>(n);
      re += x[i] * std::cos(phase);
      im -= x[i] * std::sin(phase);
    }
    magnitude[k] = std::hypot(re, im);
  }
  int64_t peak = 1;
  for (int64_t k = 2; k <= n / 2; ++k) {
    if (magnitude[k] > magnitude[peak]) peak = k;
  }
  if (!(magnitude[peak] > 0)) {
    return absl::FailedPreconditionError("the probe signal is constant: no shedding to measure");
  }
  if (peak < 2) {
    return absl::FailedPreconditionError(absl::StrCat("the probe signal's peak is at ", peak, " cycle(s) over ", n,
                                                      " samples; record at least 2 periods (more frames or steps)"));
  }
  double offset = 0;
  if (peak < n / 2) {
    const double a = std::log(magnitude[peak - 1] + 1e-300);
    const double b = std::log(magnitude[peak]);
    const double c = std::log(magnitude[peak + 1] + 1e-300);
    const double denom = a - 2 * b + c;
    if (denom < 0) offset = 0.5 * (a - c) / denom;
  }
  return (static_cast<double>(peak) + offset) / static_cast<double>(n);
}

double StrouhalNumber(double cycles_per_frame, double steps_per_frame, double diameter, double speed) {
  return cycles_per_frame / steps_per_frame * diameter / speed;
}

}  // namespace gantry
