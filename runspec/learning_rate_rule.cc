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
