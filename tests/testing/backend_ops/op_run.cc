#include "tests/testing/backend_ops/op_run.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/testing/backend_compare.h"

namespace gantry::testing {
namespace {

// Adds a failure unless actual and expected hold equal values (any NaN matching any NaN).
void ExpectSameValues(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const float a = actual.at(i), e = expected.at(i);
    if (std::isnan(e) ? std::isnan(a) : a == e) continue;
    if (bad++ == 0) first = i;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << actual.numel() << " elements differ (exact); first at " << first
                    << ": " << (first >= 0 ? actual.at(first) : 0.0f) << " vs "
                    << (first >= 0 ? expected.at(first) : 0.0f);
}

}  // namespace

Tensor OpRun::Poisoned(const Shape& shape) const {
  Tensor t = Tensor::Zeros(shape);
  t.Fill(std::numeric_limits<float>::quiet_NaN());
  return Put(t);
}

double OpRun::Bound(std::string_view output) const {
  for (const OutputBound& b : case_.bounds) {
    if (b.output == output) return on_device() ? b.device : b.host;
  }
  ADD_FAILURE() << Describe(case_) << " lists no bound for output \"" << output << "\"";
  return 0.0;
}

void OpRun::Expect(std::string_view output, const Tensor& actual, const Tensor& expected, const Tensor& magnitude,
                   const std::string& where) const {
  const double bound = Bound(output);
  const std::string what = std::string(output) + " (" + where + ")";
  if (expected.numel() == 0) return;
  if (bound == 0.0) {
    ExpectSameValues(actual, expected, what);
  } else if (!magnitude.defined()) {
    ADD_FAILURE() << what << ": a bound of " << bound << " needs a magnitude";
  } else {
    ExpectWithinBound(actual, expected, magnitude, bound, what);
  }
}

void RunOpCase(Backend& backend, const OpCase& op_case) {
  SCOPED_TRACE(std::string(backend.name()) + " " + Describe(op_case));
  OpRun run(backend, op_case);
  op_case.check(run);
  EXPECT_TRUE(run.called().contains(op_case.op))
      << Describe(op_case) << " never called Backend::" << op_case.op << " on " << backend.name();
}

}  // namespace gantry::testing
