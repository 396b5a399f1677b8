// Rank 0's heartbeat: a thread that calls Heartbeat every third of the lease for the
// whole life of the pool, whatever the training thread is doing, so a group that trains
// is never taken for lost.
//
// What it hears goes where it matters: a cancel of the job being run to that job's
// JobControl; NOT_FOUND (the coordinator does not know the group, e.g. its store was
// replaced) to group_unknown(), so the serve loop registers again. While the coordinator
// is unreachable it keeps trying at the same pace, logging the outage once and the
// recovery once. Each call is bounded by the interval.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "worker/pool/coordinator_api.h"
#include "worker/pool/job_control.h"

namespace gantry {

class HeartbeatThread {
 public:
  // Starts beating for `group_id`. `api` must outlive the thread.
  HeartbeatThread(CoordinatorApi& api, std::string group_id, double lease_seconds);
  // Stops and joins (within one call's deadline).
  ~HeartbeatThread();
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

  // The job now running (null: none); its cancel requests go to `job`.
  void SetJob(std::shared_ptr<JobControl> job);
  // After a new registration.
  void SetGroup(const std::string& group_id);
  // The coordinator answered NOT_FOUND for the group; cleared by SetGroup.
  bool group_unknown();
  int64_t beats();  // heartbeats answered so far

 private:
  void Loop();
  void Beat();

  CoordinatorApi& api_;
  absl::Mutex mu_;
  std::string group_id_ ABSL_GUARDED_BY(mu_);
  double interval_seconds_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<JobControl> job_ ABSL_GUARDED_BY(mu_);
  bool group_unknown_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  int64_t beats_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace gantry
