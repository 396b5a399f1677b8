// The pool's calls to the coordinator that are in flight, so a stop (SIGTERM) ends them
// within a stated time whatever the coordinator does: gone (every call would wait for its
// connection), stopped with SIGSTOP (every call would wait for its deadline), or slow.
//
// When the pool starts stopping, calls that only matter to a pool that goes on
// (RegisterGroup, AcquireJob) are cancelled at once and new ones fail at once; calls that
// deliver what the pool owes the coordinator (reports, the release of the job, heartbeats)
// may go on for the grace period (--flush-seconds) plus one second, and are then
// cancelled. So no call outlives the stop by more than the grace period and a second.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace grpc {
class ClientContext;
}

namespace gantry {

enum class CallKind {
  kWhileServing,  // register, acquire: useless once stopping
  kDelivery,      // reports and heartbeats: delivered during the grace period
};

class InFlightCalls {
 public:
  // `stopping` says whether the pool is stopping (polled every 50 ms by a thread of this
  // object); `grace_seconds` is how long deliveries may go on after that.
  InFlightCalls(std::function<bool()> stopping, double grace_seconds);
  ~InFlightCalls();
  InFlightCalls(const InFlightCalls&) = delete;
  InFlightCalls& operator=(const InFlightCalls&) = delete;

  // Registers `context` (not yet used for its call) for a call of `kind`: its deadline is
  // capped at the end of the grace period once stopping. False when the call must not
  // start at all (the pool is stopping and the call is kWhileServing, or the grace
  // period is over); the caller then answers CANCELLED without calling.
  bool Begin(grpc::ClientContext* context, CallKind kind);
  // The call on `context` is over (whatever Begin returned).
  void End(grpc::ClientContext* context);

 private:
  using TimePoint = std::chrono::system_clock::time_point;
  void Watch();
  // The grace period's end, once stopping; cancels what it must. Holds mu_.
  void OnStopLocked(TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<bool()> stopping_;
  const double grace_seconds_;
  absl::Mutex mu_;
  std::map<grpc::ClientContext*, CallKind> calls_ ABSL_GUARDED_BY(mu_);
  std::optional<TimePoint> grace_end_ ABSL_GUARDED_BY(mu_);
  bool all_cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watcher_;
};

}  // namespace gantry
