#include "worker/infer/batched_map.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "worker/infer/ordered_gather.h"
#include "worker/infer/tile_assignment.h"

namespace gantry {
namespace {

// This rank's outputs: max_count() slots of out_floats (unused slots 0).
absl::Status MapGroups(const TileAssignment& a, int rank, const float* inputs, const BatchedMapOptions& o,
                       const TileFunction& fn, std::vector<float>& mine) {
  std::vector<float> in(o.batch * o.in_floats);
  std::vector<float> out(o.batch * o.out_floats);
  for (int64_t first = a.begin(rank); first < a.end(rank); first += o.batch) {
    const int64_t n = std::min(o.batch, a.end(rank) - first);
    std::fill(in.begin(), in.end(), 0.0f);
    std::copy_n(inputs + first * o.in_floats, n * o.in_floats, in.begin());
    out.assign(out.size(), 0.0f);
    RETURN_IF_ERROR(fn(in, o.batch, out));
    if (static_cast<int64_t>(out.size()) != o.batch * o.out_floats) {
      return absl::InternalError(absl::StrCat("the batch function returned ", out.size(), " floats, expected ",
                                              o.batch * o.out_floats));
    }
    std::copy_n(out.data(), n * o.out_floats, mine.data() + (first - a.begin(rank)) * o.out_floats);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<float>> BatchedMap(Communicator& comm, const float* inputs, const BatchedMapOptions& o,
                                              const TileFunction& fn) {
  CHECK(o.items >= 1 && o.in_floats >= 1 && o.out_floats >= 1 && o.batch >= 1)
      << "items " << o.items << " in " << o.in_floats << " out " << o.out_floats << " batch " << o.batch;
  // Groups of exactly `batch` items: a group is one call on whichever rank runs it.
  const TileAssignment assignment = AssignTiles(o.items, o.batch, comm.size());
  std::vector<float> mine(assignment.max_count() * o.out_floats, 0.0f);
  const absl::Status mapped = MapGroups(assignment, comm.rank(), inputs, o, fn, mine);
  return GatherInItemOrder(comm, assignment, mapped, mine, o.out_floats, "batch", o.comm);
}

}  // namespace gantry
