#include "coordinator/scheduler.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace gantry {

bool AllDevicesAreGpus(const std::vector<std::string>& devices) {
  return !devices.empty() &&
         std::all_of(devices.begin(), devices.end(), [](const std::string& d) { return absl::StartsWith(d, "cuda"); });
}

bool GroupFits(const QueuedJob& job, const GroupShape& group) {
  const bool size_ok = job.world_size == 0 || job.world_size == group.world_size;
  const bool device_ok = !job.needs_gpus || group.gpus;
  return size_ok && device_ok && job.min_batch_size >= group.world_size;
}

std::optional<size_t> PickJob(const std::vector<QueuedJob>& queued, const GroupShape& group) {
  for (size_t i = 0; i < queued.size(); ++i) {
    if (GroupFits(queued[i], group)) return i;
  }
  return std::nullopt;
}

}  // namespace gantry
