#include "common/host_name.h"

#include <unistd.h>

namespace gantry {

std::string ThisHostName() {
  char buf[256] = {0};
  return ::gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string("unknown");
}

}  // namespace gantry
