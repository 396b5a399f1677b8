#include "worker/flow/strouhal.h"

#include <cmath>

namespace gantry::flow {

StrouhalEstimate MeasureStrouhal(const std::vector<double>& signal, double sample_steps, double diameter,
                                 double velocity) {
  StrouhalEstimate out;
  const size_t n = signal.size();
  if (n < 4) {
    out.why_not = "fewer than 4 samples: record more frames, or roll out more steps";
    return out;
  }
  double mean = 0;
  for (double v : signal) mean += v;
  mean /= static_cast<double>(n);
  double var = 0;
  for (double v : signal) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(n));
  // A signal at rounding level has no period to find (steady flow below the onset of
  // shedding, or shedding that has not started yet).
  if (!(sd > 1e-6 * velocity)) {
    out.why_not = "the probe's uy does not oscillate (a steady wake: raise Re, or warm up longer)";
    return out;
  }
  const double h = 0.25 * sd;
  std::vector<double> ups;
  bool armed = false;  // been below -h since the last counted crossing
  for (size_t k = 1; k < n; ++k) {
    const double a = signal[k - 1] - mean, b = signal[k] - mean;
    if (a < -h) armed = true;
    if (armed && a < 0 && b >= 0) {
      ups.push_back((static_cast<double>(k - 1) + a / (a - b)) * sample_steps);
      armed = false;
    }
  }
  if (ups.size() < 2) {
    out.why_not =
        "less than one whole shedding period in the signal: record more frames or a larger --every, or roll out "
        "more steps";
    return out;
  }
  out.found = true;
  out.periods = static_cast<int>(ups.size()) - 1;
  out.frequency = out.periods / (ups.back() - ups.front());
  out.strouhal = out.frequency * diameter / velocity;
  return out;
}

}  // namespace gantry::flow
