#include "runspec/loss_scale_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gantry {

absl::Status ValidateLossScaleConfig(const LossScaleConfig& c) {
  if (!std::isfinite(c.init_scale) || !(c.init_scale > 0.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.mode == LossScaleMode::kStatic ? "--loss-scale" : "--loss-scale-init", ": ", c.init_scale,
                     " is not a positive finite number"));
  }
  if (c.growth_interval < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--loss-scale-growth-interval: ", c.growth_interval, " must be at least 1"));
  }
  if (!std::isfinite(c.growth_factor) || !(c.growth_factor > 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--loss-scale-growth-factor: ", c.growth_factor, " must be a finite number above 1"));
  }
  if (!(c.backoff_factor > 0.0f && c.backoff_factor < 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--loss-scale-backoff-factor: ", c.backoff_factor, " must lie strictly between 0 and 1"));
  }
  return absl::OkStatus();
}

std::string LossScaleModeName(LossScaleMode mode) {
  switch (mode) {
    case LossScaleMode::kNone:
      return "none";
    case LossScaleMode::kStatic:
      return "static";
    case LossScaleMode::kDynamic:
      return "dynamic";
  }
  return "unknown";
}

}  // namespace gantry
