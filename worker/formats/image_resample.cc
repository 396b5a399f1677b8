#include "worker/formats/image_resample.h"

#include <algorithm>
#include <cmath>

namespace gantry {

double CatmullRom(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

ResampleTaps ComputeResampleTaps(int64_t in_size, int64_t out_size, int64_t begin, int64_t end) {
  constexpr double kSupport = 2.0;
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filter_scale = std::max(scale, 1.0);  // widen the kernel when shrinking
  const double support = kSupport * filter_scale;
  ResampleTaps taps;
  taps.begin = begin;
  const size_t n = static_cast<size_t>(end - begin);
  if (in_size == out_size) {
    // Every sample lands on an input sample's centre, where the kernel is 1 and 0 at every
    // other integer: one tap of weight 1 (the general case below gives the same weights,
    // with zeros around, at four times the work).
    taps.stride = 1;
    taps.weights.assign(n, 1.0f);
    taps.count.assign(n, 1);
    for (size_t j = 0; j < n; ++j) taps.first.push_back(begin + static_cast<int64_t>(j));
    return taps;
  }
  taps.stride = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  taps.first.resize(n);
  taps.count.resize(n);
  taps.weights.assign(n * static_cast<size_t>(taps.stride), 0.0f);
  std::vector<double> w(static_cast<size_t>(taps.stride));
  for (size_t j = 0; j < n; ++j) {
    const double center = (static_cast<double>(begin + static_cast<int64_t>(j)) + 0.5) * scale;
    const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(std::floor(center - support + 0.5)));
    const int64_t hi = std::min<int64_t>(in_size, static_cast<int64_t>(std::floor(center + support + 0.5)));
    const int64_t count = std::min<int64_t>(hi - lo, taps.stride);
    double sum = 0.0;
    for (int64_t k = 0; k < count; ++k) {
      w[static_cast<size_t>(k)] = CatmullRom((static_cast<double>(lo + k) - center + 0.5) / filter_scale);
      sum += w[static_cast<size_t>(k)];
    }
    taps.first[j] = lo;
    taps.count[j] = std::max<int64_t>(count, 0);
    for (int64_t k = 0; k < count; ++k) {
      taps.weights[j * static_cast<size_t>(taps.stride) + static_cast<size_t>(k)] =
          static_cast<float>(sum != 0.0 ? w[static_cast<size_t>(k)] / sum : 0.0);
    }
  }
  return taps;
}

}  // namespace gantry
