// What the coordinator has said about the job rank 0 is running, shared between the
// training thread (which asks) and the heartbeat and report threads (which hear it):
// whether it is being cancelled, whether it is gone (the coordinator no longer has it
// for this group), and the shard plans it sent for coming epochs. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gantry/v1/metrics.pb.h"

namespace gantry {

class JobControl {
 public:
  JobControl(std::string job_id, int attempt) : job_id_(std::move(job_id)), attempt_(attempt) {}

  const std::string& job_id() const { return job_id_; }
  int attempt() const { return attempt_; }

  void RequestCancel();
  bool cancel_requested();
  // The coordinator says the job is not this group's any more (ABORTED, NOT_FOUND):
  // stop training it and report nothing more. The first reason is kept.
  void MarkGone(const std::string& why);
  bool gone();
  std::string gone_reason();
  // Whether the latest report reached the coordinator (false while it is unreachable).
  void SetReachable(bool reachable);

  // A plan for (plan.batch_size, plan.epoch); a later one for the same epoch replaces it.
  void AddPlan(const v1::ShardPlan& plan);
  // The shares planned for (batch_size, epoch). Waits up to `timeout_seconds` for them
  // while the coordinator is reachable and the job neither gone nor cancelled (the
  // report of the previous epoch, whose reply carries the plan, is then in flight);
  // nullopt when no plan came.
  std::optional<std::vector<int64_t>> WaitForPlan(int64_t batch_size, int64_t epoch, double timeout_seconds);

 private:
  const std::string job_id_;
  const int attempt_;
  absl::Mutex mu_;
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  bool gone_ ABSL_GUARDED_BY(mu_) = false;
  std::string gone_reason_ ABSL_GUARDED_BY(mu_);
  bool reachable_ ABSL_GUARDED_BY(mu_) = true;
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> plans_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gantry
