// The shedding frequency of a wake from a probe signal (the cross-stream velocity uy(t)
// behind the obstacle), as a Strouhal number St = f D / U: the one measurement of the
// project, used alike for make-flow's flow.json (the simulated probe) and for a
// rollout's predicted and true probe signals (worker/rollout/rollout.h).
#pragma once

#include <string>
#include <vector>

namespace gantry::flow {

inline constexpr char kStrouhalMethod[] =
    "upward zero crossings of the probe's uy(t) minus its mean (with a hysteresis of a quarter of its standard "
    "deviation), linearly interpolated between samples; f = (crossings - 1) / (time from the first to the last)";

struct StrouhalEstimate {
  bool found = false;
  double frequency = 0;  // cycles per time step
  double strouhal = 0;   // f D / U
  int periods = 0;       // whole periods between the first and last crossing
  std::string why_not;   // when !found: what was missing and what to do (for make-flow and rollouts alike)
};

// `signal` sampled every `sample_steps` steps. Needs at least two upward crossings (one
// whole period); zero-crossing timing is exact to the interpolation, unlike an FFT peak,
// whose bins would be 1/(record length) wide: too coarse for a few periods. (A windowed
// DFT peak refined by parabolic interpolation, which the rollout used before, needs two
// whole periods and is biased at a few periods; rollouts are short, so this method
// measures more of them, and more exactly.)
StrouhalEstimate MeasureStrouhal(const std::vector<double>& signal, double sample_steps, double diameter,
                                 double velocity);

}  // namespace gantry::flow
