// Exponential backoff between attempts to reach the coordinator, on an injected clock.
//
// After the k-th failure in a row the next attempt waits
//     min(max_seconds, initial_seconds * multiplier^(k-1)) * (1 - jitter * u),
// u uniform in [0, 1) from a seeded generator, so pools that lost the same coordinator
// do not all come back in the same instant. A success resets the delay.
#pragma once

#include <cstdint>
#include <random>

#include "common/clock.h"

namespace gantry {

struct BackoffPolicy {
  double initial_seconds = 0.25;
  double max_seconds = 10;
  double multiplier = 2;
  double jitter = 0.2;  // in [0, 1): the most a delay is shortened, as a fraction
};

// Not thread-safe: each thread that calls the coordinator keeps its own.
class Backoff {
 public:
  // CHECKs a sane policy (positive delays, initial <= max, multiplier >= 1, jitter in
  // [0, 1)). `clock` must outlive the Backoff.
  Backoff(const Clock& clock, BackoffPolicy policy = {}, uint64_t seed = 1);

  // An attempt failed: the next one waits the next delay from now.
  void RecordFailure();
  // An attempt succeeded: the next one may go at once, and the delay starts over.
  void RecordSuccess();

  // Whether the next attempt may go now.
  bool Ready() const { return SecondsUntilReady() <= 0; }
  double SecondsUntilReady() const;
  // Failures in a row so far, and the delay the last one set.
  int failures() const { return failures_; }
  double last_delay_seconds() const { return last_delay_; }

 private:
  const Clock& clock_;
  BackoffPolicy policy_;
  std::mt19937_64 random_;
  int failures_ = 0;
  double last_delay_ = 0;
  int64_t ready_at_nanos_ = 0;
};

}  // namespace gantry
