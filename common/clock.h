// Time source injected wherever durations are measured, so timing logic (steady-state
// step time, stragglers, leases) is testable with a FakeClock.
#pragma once

#include <atomic>
#include <cstdint>

namespace gantry {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time in nanoseconds from an arbitrary origin.
  virtual int64_t NowNanos() const = 0;
  double NowSeconds() const { return static_cast<double>(NowNanos()) * 1e-9; }

  // The process-wide monotonic clock (std::chrono::steady_clock).
  static const Clock& Real();
};

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_nanos = 0) : now_(start_nanos) {}
  int64_t NowNanos() const override { return now_.load(); }
  void AdvanceNanos(int64_t delta) { now_.fetch_add(delta); }
  void AdvanceMillis(double ms) { AdvanceNanos(static_cast<int64_t>(ms * 1e6)); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace gantry
