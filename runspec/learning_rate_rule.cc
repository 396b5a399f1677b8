#include "runspec/learning_rate_rule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gantry {

const std::vector<std::string>& LrScalingNames() {
  static const auto* names = new std::vector<std::string>{"none", "linear", "sqrt"};
  return *names;
}

const char* LrScalingName(LrScaling scaling) {
  switch (scaling) {
    case LrScaling::kLinear: return "linear";
    case LrScaling::kSqrt: return "sqrt";
    case LrScaling::kNone: break;
  }
  return "none";
}

absl::StatusOr<LrScaling> ParseLrScaling(const std::string& name) {
  if (name == "none") return LrScaling::kNone;
  if (name == "linear") return LrScaling::kLinear;
  if (name == "sqrt") return LrScaling::kSqrt;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown learning-rate scaling '", name, "' (use ", absl::StrJoin(LrScalingNames(), ", "), ")"));
}

double ScaledLearningRate(double lr, const LearningRateRule& rule, int64_t global_batch) {
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(std::max<int64_t>(1, rule.base_batch_size));
  switch (rule.scaling) {
    case LrScaling::kLinear: return lr * ratio;
    case LrScaling::kSqrt: return lr * std::sqrt(ratio);
    case LrScaling::kNone: break;
  }
  return lr;
}

double DiscriminatorRate(double g_rate, const LearningRateRule& rule) { return g_rate * rule.d_ratio; }

double WarmedUpRate(double scaled, const LearningRateRule& rule, int64_t step) {
  if (rule.warmup_steps <= 0 || step >= rule.warmup_steps) return scaled;
  const double progress = static_cast<double>(std::max<int64_t>(0, step)) / static_cast<double>(rule.warmup_steps);
  return scaled * (rule.warmup_start + (1.0 - rule.warmup_start) * progress);
}

namespace {

// The flags behind one effective rate, in the order they apply: "--lr 0.01, --lr-scaling
// linear from --base-batch-size 4 (x128), --d-lr-ratio 1000".
std::string RateFlags(double lr, const LearningRateRule& rule, int64_t batch, bool discriminator, bool first) {
  std::string flags = absl::StrFormat("--lr %g", lr);
  if (rule.scaling != LrScaling::kNone) {
    absl::StrAppendFormat(&flags, ", --lr-scaling %s from --base-batch-size %d (x%g)", LrScalingName(rule.scaling),
                          rule.base_batch_size, ScaledLearningRate(1.0, rule, batch));
  }
  if (first) absl::StrAppendFormat(&flags, ", --warmup-start %g (with --warmup-steps)", rule.warmup_start);
  if (discriminator && rule.d_ratio != 1.0) absl::StrAppendFormat(&flags, ", --d-lr-ratio %g", rule.d_ratio);
  return flags;
}

}  // namespace

absl::Status CheckEffectiveRates(double lr, const LearningRateRule& rule, const std::vector<int64_t>& batch_sizes) {
  for (int64_t batch : batch_sizes) {
    const double g = ScaledLearningRate(lr, rule, batch);
    for (const bool discriminator : {false, true}) {
      const double rate = discriminator ? DiscriminatorRate(g, rule) : g;
      const bool warm = rule.warmup_steps > 0;
      // The largest rate is the scaled one; the smallest the warm-up's first.
      const double lowest = warm ? rate * rule.warmup_start : rate;
      const bool too_high = !(rate <= kMaxEffectiveRate);
      if (!too_high && lowest >= kMinEffectiveRate) continue;
      const double bad = too_high ? rate : lowest;
      return absl::InvalidArgumentError(absl::StrFormat(
          "the %s's %slearning rate at global batch %d would be %g, outside [%g, %g]: made by %s; change them so "
          "that each network's rate stays in that range at every batch size",
          discriminator ? "discriminator" : "generator", !too_high && warm ? "first warm-up " : "", batch, bad,
          kMinEffectiveRate, kMaxEffectiveRate, RateFlags(lr, rule, batch, discriminator, !too_high && warm)));
    }
  }
  return absl::OkStatus();
}

std::string DescribeLearningRate(double lr, const LearningRateRule& rule, int64_t global_batch) {
  const double scaled = ScaledLearningRate(lr, rule, global_batch);
  std::string out = absl::StrFormat("%g", scaled);
  if (rule.scaling != LrScaling::kNone) {
    absl::StrAppendFormat(&out, " (%s scaling of %g from batch %d)", LrScalingName(rule.scaling), lr,
                          rule.base_batch_size);
  }
  if (rule.warmup_steps > 0) {
    absl::StrAppendFormat(&out, ", warm-up over %d steps from %g %%", rule.warmup_steps, 100.0 * rule.warmup_start);
  }
  if (rule.d_ratio != 1.0) {
    absl::StrAppendFormat(&out, "; discriminator %gx: %g", rule.d_ratio, DiscriminatorRate(scaled, rule));
  }
  return out;
}

}  // namespace gantry
