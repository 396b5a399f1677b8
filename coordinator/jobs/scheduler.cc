#include "coordinator/jobs/scheduler.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runspec/batch_fit.h"

namespace gantry {

bool AllDevicesAreGpus(const std::vector<std::string>& devices) {
  return !devices.empty() &&
         std::all_of(devices.begin(), devices.end(), [](const std::string& d) { return absl::StartsWith(d, "cuda"); });
}

bool GroupFits(const QueuedJob& job, const GroupShape& group) {
  const bool size_ok = job.world_size == 0 || job.world_size == group.world_size;
  const bool device_ok = !job.needs_gpus || group.gpus;
  // The smallest batch gives the smallest shares; every rank needs at least one row.
  const bool shares_ok = job.any_batch || (job.min_batch_size >= group.world_size &&
                                           SmallestEvenShare(job.min_batch_size, group.world_size) >= job.min_share);
  return size_ok && device_ok && shares_ok;
}

std::string FitNeeds(const QueuedJob& job) {
  std::string needs;
  if (job.world_size > 0) {
    needs = absl::StrCat("a group of ", job.world_size, " rank(s)");
  } else if (job.any_batch) {
    needs = "any group";
  } else {
    const int64_t most = job.min_batch_size / std::max<int64_t>(job.min_share, 1);
    needs = absl::StrCat("a group of at most ", most, " rank(s) (its smallest batch, ", job.min_batch_size,
                         ", must give every rank at least ", job.min_share, " row(s)",
                         job.min_share > 1 ? "; --sync-bn lowers that to 1" : "", ")");
  }
  if (job.needs_gpus) absl::StrAppend(&needs, " whose ranks all have a GPU");
  return needs;
}

std::optional<size_t> PickJob(const std::vector<QueuedJob>& queued, const GroupShape& group) {
  for (size_t i = 0; i < queued.size(); ++i) {
    if (GroupFits(queued[i], group)) return i;
  }
  return std::nullopt;
}

}  // namespace gantry
