#include "worker/monitor/peak_rss.h"

#include <sys/resource.h>

namespace gantry {

double PeakRssMiB() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace gantry
