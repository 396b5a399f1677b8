#include "worker/infer/ordered_gather.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"

namespace gantry {

absl::StatusOr<std::vector<float>> GatherInItemOrder(Communicator& comm, const TileAssignment& assignment,
                                                     const absl::Status& mapped, const std::vector<float>& mine,
                                                     int64_t item_floats, const char* item_name,
                                                     const CommOptions& options) {
  CHECK_EQ(assignment.ranks, comm.size());
  CHECK_EQ(static_cast<int64_t>(mine.size()), assignment.max_count() * item_floats);
  // Every rank learns whether all mapped before any waits in the gather.
  float failed = mapped.ok() ? 0.0f : 1.0f;
  RETURN_IF_ERROR(comm.AllReduceSum(&failed, 1, options));
  if (failed > 0) {
    if (!mapped.ok()) return mapped;
    return absl::AbortedError(absl::StrCat("a ", item_name, " failed on another rank (see that rank's output)"));
  }
  const bool root = comm.rank() == 0;
  std::vector<float> gathered;
  if (root) gathered.resize(static_cast<size_t>(comm.size()) * mine.size());
  RETURN_IF_ERROR(comm.Gather(mine.data(), static_cast<int64_t>(mine.size() * sizeof(float)),
                              root ? gathered.data() : nullptr, 0, options));
  if (!root) return std::vector<float>{};
  // Rank r's slots hold items [begin(r), end(r)): laid out in item order they are
  // contiguous once each rank's unused slots are dropped.
  std::vector<float> ordered(static_cast<size_t>(assignment.tiles * item_floats));
  for (int r = 0; r < comm.size(); ++r) {
    std::copy_n(gathered.data() + r * mine.size(), assignment.count(r) * item_floats,
                ordered.data() + assignment.begin(r) * item_floats);
  }
  return ordered;
}

}  // namespace gantry
