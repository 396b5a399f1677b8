// Per-step error measures of a rollout (a model's predictions fed back as its input),
// computed on physical fields against the simulator's truth. All sums are in double.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gantry {

// ||pred - truth||_2 / ||truth||_2 over `n` values; +inf when truth is all zero but pred
// is not, 0 when both are.
double RelativeL2(const float* pred, const float* truth, int64_t n);

// The same over the values whose `mask` entry (one per value of a plane of `plane`
// values, repeated over `planes` planes) equals `select`: the error near tile seams
// (select 1 with SeamBandMask) vs in tile interiors (select 0).
double RelativeL2Masked(const float* pred, const float* truth, int64_t planes, int64_t plane,
                        const std::vector<uint8_t>& mask, uint8_t select);

// Uncentred correlation (cosine similarity) <a, b> / (||a|| ||b||) over `n` values, as
// jax-cfd's state_correlation: 1 for proportional fields, 0 when either is all zero.
double UncentredCorrelation(const float* a, const float* b, int64_t n);

// The first step (index into `correlation`) whose value is below `threshold`; nullopt
// when none is (the rollout stayed above it throughout).
std::optional<int64_t> FirstBelow(const std::vector<double>& correlation, double threshold);

// A prediction's L2 norm beyond this many times the truth's is a blow-up.
inline constexpr double kBlowUpNormRatio = 10.0;
// Whether a prediction of `n` values has blown up against its truth: any non-finite value,
// or ||pred|| > kBlowUpNormRatio ||truth||.
bool BlewUp(const float* pred, const float* truth, int64_t n);

}  // namespace gantry
