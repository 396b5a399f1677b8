// What one collective call is, checked and described the same way by every backend, so
// their errors read alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"

namespace gantry {

enum class CollectiveKind { kAllReduce, kAllReduceBf16, kBroadcast, kGather, kBarrier };

struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kBarrier;
  int64_t seq = 0;    // 1-based position in this rank's sequence of collectives
  int64_t count = 0;  // floats (bf16 values) for all-reduce, bytes per rank for broadcast and gather
  int root = -1;      // broadcast and gather only

  bool SameShape(const CollectiveCall& other) const {
    return kind == other.kind && seq == other.seq && count == other.count && root == other.root;
  }
};

// "all-reduce #17 of 2518337 floats", "all-reduce #18 of 2518337 bf16 values",
// "broadcast #3 of 64 bytes from rank 0",
// "gather #4 of 8 bytes per rank to rank 1", "barrier #5".
std::string Describe(const CollectiveCall& call);

// The largest count (values or bytes) one collective takes, on every backend alike: MPI
// counts are ints.
inline constexpr int64_t kMaxCollectiveCount = 2147483647;

// InvalidArgument naming `rank` and the call when count is negative or above
// kMaxCollectiveCount, root is outside [0, size) for a rooted collective, a buffer that
// must be read or written is null, or the timeout is not positive and finite.
absl::Status ValidateCall(int rank, int size, const CollectiveCall& call, const void* data,
                          const void* root_recv, const CommOptions& opts);

// "rank 1 did not arrive (dead or stuck?)", "ranks 1, 3 did not arrive (dead or stuck?)".
std::string DidNotArrive(const std::vector<int>& ranks);

// "rank R: <Describe(call)> timed out after T s; <diagnosis>".
absl::Status TimeoutError(int rank, const CollectiveCall& call, double timeout_seconds,
                          const std::string& diagnosis);

}  // namespace gantry
