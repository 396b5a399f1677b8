#include "worker/optim/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/check.h"

namespace gantry {


LossScaler::LossScaler(const LossScaleConfig& config)
    : config_(config), scale_(config.mode == LossScaleMode::kNone ? 1.0f : config.init_scale) {
  const absl::Status valid = ValidateLossScaleConfig(config);
  CHECK(valid.ok()) << std::string(valid.message());
}

absl::Status LossScaler::Restore(const LossScalerState& state) {
  if (!std::isfinite(state.scale) || !(state.scale > 0.0f) || state.clean_streak < 0 || state.skipped < 0 ||
      (config_.mode == LossScaleMode::kNone && state.scale != 1.0f) ||
      (config_.mode == LossScaleMode::kStatic && state.scale != config_.init_scale)) {
    return absl::InvalidArgumentError(absl::StrCat("loss scaler (", LossScaleModeName(config_.mode),
                                                   "): cannot take the saved scale ", state.scale, ", streak ",
                                                   state.clean_streak, ", skipped ", state.skipped,
                                                   " (saved under other loss-scale settings?)"));
  }
  scale_ = state.scale;
  clean_streak_ = state.clean_streak;
  skipped_ = state.skipped;
  return absl::OkStatus();
}

bool LossScaler::Update(bool gradients_finite) {
  if (config_.mode == LossScaleMode::kNone) return true;
  if (!gradients_finite) {
    ++skipped_;
    if (config_.mode == LossScaleMode::kDynamic) {
      scale_ = std::max(scale_ * config_.backoff_factor, std::numeric_limits<float>::min());
      clean_streak_ = 0;
    }
    return false;
  }
  if (config_.mode == LossScaleMode::kDynamic && ++clean_streak_ == config_.growth_interval) {
    const float grown = scale_ * config_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    clean_streak_ = 0;
  }
  return true;
}

}  // namespace gantry
