#include "worker/tensor/random.h"

#include <cmath>
#include <numbers>

namespace gantry {

double Rng::Normal() {
  // 1 - Uniform() lies in (0, 1], so the log is finite.
  const double u1 = 1.0 - Uniform();
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace gantry
