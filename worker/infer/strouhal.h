// The shedding frequency of a wake probe signal and its Strouhal number St = f D / U.
// (The LBM generator measures its own St for flow.json; this one measures a rollout's
// predicted and true probe signals the same way for both.)
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

// The dominant frequency of `signal` in cycles per sample: the mean is removed, a Hann
// window applied, and the peak of the DFT magnitude over bins 1..n/2 refined by fitting
// a parabola to the log magnitudes of the peak and its neighbours (the Hann peak is
// close to Gaussian, so this is accurate to a small fraction of a bin). FAILED_PRECONDITION
// when the signal has fewer than 8 samples, is constant, or its peak lies below 2 cycles
// over the record (too short a record to measure: record more frames).
absl::StatusOr<double> DominantFrequency(const std::vector<double>& signal);

// St = (cycles per frame / lattice steps per frame) * diameter / inlet speed.
double StrouhalNumber(double cycles_per_frame, double steps_per_frame, double diameter, double speed);

}  // namespace gantry
