#include "common/machine_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The "MemAvailable:  123456 kB" line of /proc/meminfo, in bytes; 0 when absent.
int64_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:" && kib > 0 && kib < (int64_t{1} << 52)) return kib * 1024;
  }
  return 0;
}

// One number from a cgroup v2 file ("max" and anything unreadable: -1).
int64_t CgroupNumber(const char* path) {
  std::ifstream in(path);
  std::string text;
  int64_t value = -1;
  if (!(in >> text) || !absl::SimpleAtoi(text, &value) || value < 0) return -1;
  return value;
}

// What the cgroup's limit leaves; -1 without a limit.
int64_t CgroupHeadroomBytes() {
  const int64_t limit = CgroupNumber("/sys/fs/cgroup/memory.max");
  if (limit < 0) return -1;
  const int64_t used = std::max<int64_t>(CgroupNumber("/sys/fs/cgroup/memory.current"), 0);
  return std::max<int64_t>(limit - std::min(limit, used), 0);
}

int64_t FreePhysicalBytes() {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

}  // namespace

int64_t AvailableMemoryBytes() {
  int64_t available = MemAvailableBytes();
  if (available == 0) available = FreePhysicalBytes();
  const int64_t headroom = CgroupHeadroomBytes();
  if (headroom >= 0 && (available == 0 || headroom < available)) available = headroom;
  return available;
}

absl::Status CheckFitsMemory(const MemoryNeed& need, int64_t available_bytes) {
  if (available_bytes <= 0 || need.bytes <= static_cast<double>(available_bytes)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s needs about %.1f GiB, more than the %.1f GiB this machine has available: %s", need.what, need.bytes / kGiB,
      static_cast<double>(available_bytes) / kGiB, need.fix));
}

absl::Status CheckFitsMemory(const MemoryNeed& need) { return CheckFitsMemory(need, AvailableMemoryBytes()); }

}  // namespace gantry
