// FIFO scheduling: a group that asks for work gets the oldest queued job it can run.
//
// A group can run a job when the job asks for the group's size (or for any size, 0) and
// every batch size of the job gives each of the group's ranks at least one sample. A job
// that no idle group fits waits without blocking the jobs behind it that do fit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gantry {

struct QueuedJob {
  std::string id;
  int world_size = 0;          // 0: any
  int64_t min_batch_size = 1;  // the smallest global batch of its sweep
};

bool GroupFits(const QueuedJob& job, int group_world_size);

// Index into `queued` (oldest first) of the job to hand to a group of this size.
std::optional<size_t> PickJob(const std::vector<QueuedJob>& queued, int group_world_size);

}  // namespace gantry
