#include "tests/testing/golden.h"

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>

#include "gtest/gtest.h"
#include "worker/formats/npy.h"

namespace gantry::testing {

Tensor LoadNpyTensor(const std::string& path) {
  absl::StatusOr<NpyArray> array = ReadNpy(path);
  CHECK(array.ok()) << "golden file " << path << ": " << array.status().ToString()
                    << " (regenerate with /usr/bin/python3 scripts/make_goldens.py)";
  std::vector<int64_t> dims = array->shape;
  if (dims.empty()) dims.push_back(1);
  return Tensor::FromVector(Shape(std::move(dims)), array->data);
}

double MaxAbs(const Tensor& t) {
  double m = 0.0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(static_cast<double>(t.at(i))));
  return m;
}

void ExpectAllClose(const Tensor& actual, const Tensor& expected, double atol, double rtol,
                    const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what << ": actual tensor is undefined";
  ASSERT_TRUE(expected.defined()) << what << ": expected tensor is undefined";
  ASSERT_EQ(actual.shape(), expected.shape())
      << what << ": shape " << actual.shape().ToString() << " vs expected " << expected.shape().ToString();
  int64_t bad = 0;
  int64_t worst = -1;
  double worst_ratio = 0.0;  // error / allowance; > 1 fails
  double max_abs_err = 0.0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual.at(i);
    const double e = expected.at(i);
    const double err = std::fabs(a - e);
    const double allowed = atol + rtol * std::fabs(e);
    // NaN compares false everywhere: treat it as an infinite error.
    const double ratio = std::isnan(err) ? std::numeric_limits<double>::infinity()
                                         : (allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0));
    if (!std::isnan(err)) max_abs_err = std::max(max_abs_err, err);
    if (ratio > 1.0) ++bad;
    if (worst < 0 || ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (bad > 0) {
    ADD_FAILURE() << std::setprecision(9) << what << ": " << bad << " of " << expected.numel()
                  << " elements outside atol " << atol << " + rtol " << rtol << " * |expected|; worst ["
                  << worst << "] actual " << actual.at(worst) << " expected " << expected.at(worst)
                  << " (error " << std::fabs(static_cast<double>(actual.at(worst)) - expected.at(worst))
                  << ", " << worst_ratio << "x the allowance); max |error| " << max_abs_err
                  << ", max |expected| " << MaxAbs(expected);
  }
}

}  // namespace gantry::testing
