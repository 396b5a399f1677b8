// How a run's learning rate follows the global batch size and the step count:
// scaling from the batch the rate was tuned for (--lr-scaling, --base-batch-size) and a
// linear warm-up (--warmup-steps, --warmup-start). Both networks' optimizers follow the
// same rule; the discriminator's rate may be a fixed multiple of the generator's
// (--d-lr-ratio). Pure arithmetic, shared by the worker (which applies it) and the control
// plane (which shows it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

enum class LrScaling {
  kNone,    // the same --lr at every batch size
  kLinear,  // --lr x batch / base (Goyal et al. 2017, for SGD)
  kSqrt,    // --lr x sqrt(batch / base) (keeps the update's noise scale; suits Adam)
};

const std::vector<std::string>& LrScalingNames();  // none, linear, sqrt
const char* LrScalingName(LrScaling scaling);
absl::StatusOr<LrScaling> ParseLrScaling(const std::string& name);

struct LearningRateRule {
  LrScaling scaling = LrScaling::kNone;
  int64_t base_batch_size = 64;  // the global batch --lr was tuned for
  // The first warmup_steps optimizer steps at each batch size ramp the rate linearly from
  // warmup_start x the scaled rate up to the scaled rate; 0: no warm-up.
  int64_t warmup_steps = 0;
  double warmup_start = 0.1;
  // The discriminator's rate as a multiple of the generator's (--d-lr-ratio; two
  // time-scale rates, TTUR): applied after the scaling, inside the same warm-up. 1: the
  // same rate for both networks.
  double d_ratio = 1.0;
  bool operator==(const LearningRateRule&) const = default;
};

// The rate after scaling for `global_batch` (before any warm-up): the generator's; the
// discriminator's is DiscriminatorRate of it.
double ScaledLearningRate(double lr, const LearningRateRule& rule, int64_t global_batch);

// The discriminator's rate for the generator's rate `g_rate` (scaled, not warmed up).
double DiscriminatorRate(double g_rate, const LearningRateRule& rule);

// The rate of optimizer step `step` (0-based: the number of steps already taken) for a
// scaled rate `scaled`. A function of the step count alone, so a run resumed from a
// checkpoint (which keeps the optimizer's step count) continues the ramp exactly.
double WarmedUpRate(double scaled, const LearningRateRule& rule, int64_t step);

// The range every effective rate must lie in: --lr's own, so scaling, the warm-up and
// --d-lr-ratio cannot make a rate the flag would refuse (1280 trains to a loss of 1e13; a
// rate under 1e-12 trains nothing, and one under float's range becomes 0).
inline constexpr double kMinEffectiveRate = 1e-12;
inline constexpr double kMaxEffectiveRate = 10;

// OK when, at every batch size of `batch_sizes`, both networks' rates after scaling
// (and the warm-up's first rate, with a warm-up) lie in [kMinEffectiveRate,
// kMaxEffectiveRate]; else INVALID_ARGUMENT naming the network, the batch size, the rate
// and the flags that produced it (--lr, --lr-scaling with --base-batch-size,
// --warmup-start, --d-lr-ratio), so the run is refused before it trains.
absl::Status CheckEffectiveRates(double lr, const LearningRateRule& rule, const std::vector<int64_t>& batch_sizes);

// "0.0008 (linear scaling of 0.0001 from batch 64), warm-up over 20 steps from 10 %",
// for logs and timing.md; with a --d-lr-ratio other than 1 also
// "; discriminator 4x: 0.0032".
std::string DescribeLearningRate(double lr, const LearningRateRule& rule, int64_t global_batch);

}  // namespace gantry
