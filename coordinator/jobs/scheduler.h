// FIFO scheduling: a group that asks for work gets the oldest queued job it can run.
//
// A group can run a job when the job asks for the group's size (or for any size, 0),
// every batch size of the job gives each of the group's ranks at least the job's minimum
// share (runspec/batch_fit.h: one row, or without --sync-bn the model's BatchNorm minimum),
// and, for a job that trains on GPUs (--device cuda), every rank of the group reported a
// CUDA device. A rollout job has no batch: only its world size (if any) limits the group.
// A job that no idle group fits waits without blocking the jobs behind it
// that do fit.
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
  bool needs_gpus = false;     // spec.device cuda
  int64_t min_share = 1;       // the fewest rows any rank may get (ResolvedSpec::min_share)
  bool any_batch = false;      // a rollout: no batch to split, its tiles go to any number of ranks
};

// What the scheduler knows of an idle group.
struct GroupShape {
  int world_size = 1;
  bool gpus = false;  // every rank reported a CUDA device (RegisterGroupRequest.devices)
};

// True when every entry of a group's reported devices names a CUDA device ("cuda:0 ...");
// false for none.
bool AllDevicesAreGpus(const std::vector<std::string>& devices);

bool GroupFits(const QueuedJob& job, const GroupShape& group);

// What a group needs to fit `job`, for a person: "a group of 2 ranks", "a group of at
// most 1 rank (...)", "... whose ranks all have a GPU".
std::string FitNeeds(const QueuedJob& job);

// Index into `queued` (oldest first) of the job to hand to this group.
std::optional<size_t> PickJob(const std::vector<QueuedJob>& queued, const GroupShape& group);

}  // namespace gantry
