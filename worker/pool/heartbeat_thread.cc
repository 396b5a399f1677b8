#include "worker/pool/heartbeat_thread.h"

#include <algorithm>

#include "absl/time/time.h"
#include "spdlog/spdlog.h"

namespace gantry {
namespace {

// A third of the lease leaves two more chances before the coordinator gives up on us.
double IntervalFor(double lease_seconds) { return std::max(0.05, lease_seconds / 3); }

}  // namespace

HeartbeatThread::HeartbeatThread(CoordinatorApi& api, std::string group_id, double lease_seconds)
    : api_(api), group_id_(std::move(group_id)), interval_seconds_(IntervalFor(lease_seconds)) {
  thread_ = std::thread([this] { Loop(); });
}

HeartbeatThread::~HeartbeatThread() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void HeartbeatThread::SetJob(std::shared_ptr<JobControl> job) {
  absl::MutexLock lock(&mu_);
  job_ = std::move(job);
}

void HeartbeatThread::SetGroup(const std::string& group_id) {
  absl::MutexLock lock(&mu_);
  group_id_ = group_id;
  group_unknown_ = false;
}

bool HeartbeatThread::group_unknown() {
  absl::MutexLock lock(&mu_);
  return group_unknown_;
}

int64_t HeartbeatThread::beats() {
  absl::MutexLock lock(&mu_);
  return beats_;
}

void HeartbeatThread::Loop() {
  while (true) {
    double interval = 0;
    {
      absl::MutexLock lock(&mu_);
      interval = interval_seconds_;
      // Sleeps the interval, or less when asked to stop.
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Seconds(interval));
      if (stopping_) return;
    }
    Beat();
  }
}

void HeartbeatThread::Beat() {
  v1::HeartbeatRequest request;
  double timeout = 0;
  std::shared_ptr<JobControl> job;
  {
    absl::MutexLock lock(&mu_);
    request.set_group_id(group_id_);
    timeout = interval_seconds_;
    job = job_;
  }
  absl::StatusOr<v1::HeartbeatResponse> reply = api_.Heartbeat(request, timeout);
  absl::MutexLock lock(&mu_);
  if (!reply.ok()) {
    if (absl::IsNotFound(reply.status())) group_unknown_ = true;
    if (!failing_) spdlog::warn("heartbeat failed: {} (retrying every {:.1f} s)", std::string(reply.status().message()),
                                interval_seconds_);
    failing_ = true;
    return;
  }
  if (failing_) spdlog::info("heartbeat: the coordinator answers again");
  failing_ = false;
  ++beats_;
  if (reply->lease_seconds() > 0) interval_seconds_ = IntervalFor(reply->lease_seconds());
  if (job && reply->cancel() && reply->job_id() == job->job_id()) job->RequestCancel();
}

}  // namespace gantry
