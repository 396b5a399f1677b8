// Unix time as a Clock, for the timestamps the coordinator stores and shows. It can
// jump (NTP, an operator), so nothing that measures a duration uses it: leases run on
// Clock::Real().
#pragma once

#include "common/clock.h"

namespace gantry {

class UnixClock : public Clock {
 public:
  int64_t NowNanos() const override;  // nanoseconds since 1970-01-01 UTC
  static const UnixClock& Get();
};

}  // namespace gantry
