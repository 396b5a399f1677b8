// The loss-scaling settings of a run (--loss-scale and its dynamic parameters), as the
// configuration carries them to each network's LossScaler (worker/optim/loss_scaler.h,
// which states the scaling rules).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace gantry {

enum class LossScaleMode { kNone, kStatic, kDynamic };

struct LossScaleConfig {
  LossScaleMode mode = LossScaleMode::kNone;
  float init_scale = 65536.0f;    // dynamic: the first scale; static: the scale
  int64_t growth_interval = 2000;
  float growth_factor = 2.0f;
  float backoff_factor = 0.5f;
  bool operator==(const LossScaleConfig&) const = default;
};

// InvalidArgument naming the setting when init_scale is not a positive finite number,
// growth_interval < 1, growth_factor <= 1 or backoff_factor outside (0, 1).
absl::Status ValidateLossScaleConfig(const LossScaleConfig& config);

// "none" | "static" | "dynamic".
std::string LossScaleModeName(LossScaleMode mode);

}  // namespace gantry
