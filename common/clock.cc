#include "common/clock.h"

#include <chrono>

namespace gantry {
namespace {

class SteadyClock : public Clock {
 public:
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

const Clock& Clock::Real() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace gantry
