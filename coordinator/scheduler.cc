#include "coordinator/scheduler.h"

namespace gantry {

bool GroupFits(const QueuedJob& job, int group_world_size) {
  const bool size_ok = job.world_size == 0 || job.world_size == group_world_size;
  return size_ok && job.min_batch_size >= group_world_size;
}

std::optional<size_t> PickJob(const std::vector<QueuedJob>& queued, int group_world_size) {
  for (size_t i = 0; i < queued.size(); ++i) {
    if (GroupFits(queued[i], group_world_size)) return i;
  }
  return std::nullopt;
}

}  // namespace gantry
