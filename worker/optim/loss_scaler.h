// Loss scaling for mixed-precision training, one scaler per network, with the rules of
// PyTorch's GradScaler:
//   - the loss is multiplied by scale() before backward, the gradients by 1/scale()
//     before the optimizer step;
//   - a step whose (all-reduced, scaled) gradients hold an inf or NaN is skipped: the
//     optimizer does not step, and in dynamic mode the scale is multiplied by
//     backoff_factor and the run of clean steps restarts;
//   - in dynamic mode, after growth_interval consecutive clean steps the scale is
//     multiplied by growth_factor (unless that would overflow fp32) and the run restarts.
// Static mode keeps its scale and still skips non-finite steps; none means scale 1 and
// no check at all (plain fp32 training: a non-finite gradient reaches the optimizer).
//
// One deviation from GradScaler: a backoff never takes the scale below the smallest
// normal float (2^-126), so 1/scale stays finite. GradScaler lets it reach 0 (after
// ~150 consecutive skips), where unscaling multiplies by infinity.
//
// The scaler holds no communicator: each rank feeds it the decision made from the
// all-reduced gradient bytes, which are identical on every rank, so every rank's scaler
// passes through the same states (see DataParallelStep).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runspec/loss_scale_config.h"

namespace gantry {

// What a scaler remembers between steps (for checkpoints).
struct LossScalerState {
  float scale = 1;
  int64_t clean_streak = 0;
  int64_t skipped = 0;
  bool operator==(const LossScalerState&) const = default;
};

class LossScaler {
 public:
  // `config` must be valid (CHECKed).
  explicit LossScaler(const LossScaleConfig& config);

  LossScaleMode mode() const { return config_.mode; }
  // The factor for this step's loss: 1 in mode none.
  float scale() const { return scale_; }
  // Whether this step's gradients must be checked for inf/NaN (static and dynamic).
  bool checks_gradients() const { return config_.mode != LossScaleMode::kNone; }

  // Records this step's outcome: `gradients_finite` is the check of the all-reduced,
  // scaled gradients (ignored in mode none). Returns whether the optimizer steps; false
  // means this step is skipped (and counted).
  bool Update(bool gradients_finite);

  int64_t skipped_steps() const { return skipped_; }
  // Clean steps since the last growth or backoff (GradScaler's growth tracker).
  int64_t clean_streak() const { return clean_streak_; }

  LossScalerState state() const { return {scale_, clean_streak_, skipped_}; }
  // Puts back a state saved by state() of a scaler with the same configuration, so the
  // next Update() decides as the saving scaler's would have. INVALID_ARGUMENT when the
  // scale is not a positive finite number, or is not 1 in mode none (a state from a run
  // with other loss-scale settings); the scaler is then unchanged.
  absl::Status Restore(const LossScalerState& state);

 private:
  LossScaleConfig config_;
  float scale_;
  int64_t clean_streak_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace gantry
