#include "coordinator/app/wall_clock.h"

#include <chrono>

namespace gantry {

int64_t UnixClock::NowNanos() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const UnixClock& UnixClock::Get() {
  static const UnixClock clock;
  return clock;
}

}  // namespace gantry
