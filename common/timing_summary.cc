#include "common/timing_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gantry {

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double SteadyStateMean(const std::vector<double>& step_values, double trim_fraction) {
  const size_t n = step_values.size();
  if (n == 0) return 0.0;
  size_t trim = static_cast<size_t>(std::floor(static_cast<double>(n) * trim_fraction));
  if (2 * trim >= n) trim = (n - 1) / 2;
  const auto first = step_values.begin() + static_cast<std::ptrdiff_t>(trim);
  const auto last = step_values.end() - static_cast<std::ptrdiff_t>(trim);
  return std::accumulate(first, last, 0.0) / static_cast<double>(last - first);
}

}  // namespace gantry
