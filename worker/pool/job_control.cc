#include "worker/pool/job_control.h"

#include "absl/time/time.h"

namespace gantry {

void JobControl::RequestCancel() {
  absl::MutexLock lock(&mu_);
  cancel_ = true;
}

bool JobControl::cancel_requested() {
  absl::MutexLock lock(&mu_);
  return cancel_;
}

void JobControl::MarkGone(const std::string& why) {
  absl::MutexLock lock(&mu_);
  if (gone_) return;
  gone_ = true;
  gone_reason_ = why;
}

bool JobControl::gone() {
  absl::MutexLock lock(&mu_);
  return gone_;
}

std::string JobControl::gone_reason() {
  absl::MutexLock lock(&mu_);
  return gone_reason_;
}

void JobControl::SetReachable(bool reachable) {
  absl::MutexLock lock(&mu_);
  reachable_ = reachable;
}

void JobControl::AddPlan(const v1::ShardPlan& plan) {
  absl::MutexLock lock(&mu_);
  plans_[{plan.batch_size(), plan.epoch()}] = std::vector<int64_t>(plan.shares().begin(), plan.shares().end());
}

std::optional<std::vector<int64_t>> JobControl::WaitForPlan(int64_t batch_size, int64_t epoch,
                                                            double timeout_seconds) {
  const std::pair<int64_t, int64_t> key{batch_size, epoch};
  absl::MutexLock lock(&mu_);
  auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return plans_.count(key) > 0 || !reachable_ || gone_ || cancel_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&settled), absl::Seconds(timeout_seconds));
  auto it = plans_.find(key);
  if (it == plans_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gantry
