// Summaries of per-step durations: percentiles and the steady-state mean that leaves
// out ramp-up and ramp-down steps.
#pragma once

#include <vector>

namespace gantry {

// The q-quantile (0 <= q <= 1) of `values` by linear interpolation between order
// statistics (NumPy's default). Returns 0 for an empty input.
double Percentile(std::vector<double> values, double q);

// Mean of the steps left after dropping the first and last `trim_fraction` of them
// (rounded down, at least one step is always kept). With trim_fraction = 0.1 and 50
// steps, steps 5..44 count. Returns 0 for an empty input.
double SteadyStateMean(const std::vector<double>& step_values, double trim_fraction = 0.1);

}  // namespace gantry
