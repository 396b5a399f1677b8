#include "worker/pool/backoff.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace gantry {

Backoff::Backoff(const Clock& clock, BackoffPolicy policy, uint64_t seed)
    : clock_(clock), policy_(policy), random_(seed), ready_at_nanos_(clock.NowNanos()) {
  CHECK(policy.initial_seconds > 0 && policy.initial_seconds <= policy.max_seconds) << "backoff delays";
  CHECK(policy.multiplier >= 1) << "backoff multiplier " << policy.multiplier;
  CHECK(policy.jitter >= 0 && policy.jitter < 1) << "backoff jitter " << policy.jitter;
}

void Backoff::RecordFailure() {
  ++failures_;
  // Capped before the power can overflow: 2^60 times any initial delay is past any cap.
  const double grown = policy_.initial_seconds * std::pow(policy_.multiplier, std::min(failures_ - 1, 60));
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  last_delay_ = std::min(policy_.max_seconds, grown) * (1.0 - policy_.jitter * u);
  ready_at_nanos_ = clock_.NowNanos() + static_cast<int64_t>(last_delay_ * 1e9);
}

void Backoff::RecordSuccess() {
  failures_ = 0;
  last_delay_ = 0;
  ready_at_nanos_ = clock_.NowNanos();
}

double Backoff::SecondsUntilReady() const {
  return static_cast<double>(ready_at_nanos_ - clock_.NowNanos()) * 1e-9;
}

}  // namespace gantry
