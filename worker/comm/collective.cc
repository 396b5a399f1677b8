#include "worker/comm/collective.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gantry {

std::string Describe(const CollectiveCall& call) {
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
      return absl::StrCat("all-reduce #", call.seq, " of ", call.count, " floats");
    case CollectiveKind::kAllReduceBf16:
      return absl::StrCat("all-reduce #", call.seq, " of ", call.count, " bf16 values");
    case CollectiveKind::kBroadcast:
      return absl::StrCat("broadcast #", call.seq, " of ", call.count, " bytes from rank ", call.root);
    case CollectiveKind::kGather:
      return absl::StrCat("gather #", call.seq, " of ", call.count, " bytes per rank to rank ", call.root);
    case CollectiveKind::kBarrier:
      return absl::StrCat("barrier #", call.seq);
  }
  return absl::StrCat("collective #", call.seq);
}

absl::Status ValidateCall(int rank, int size, const CollectiveCall& call, const void* data,
                          const void* root_recv, const CommOptions& opts) {
  auto invalid = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, ": ", Describe(call), ": ", why));
  };
  if (!std::isfinite(opts.timeout_seconds) || opts.timeout_seconds <= 0) {
    return invalid(
        absl::StrFormat("timeout_seconds is %g; it must be positive and finite", opts.timeout_seconds));
  }
  if (call.count < 0 || call.count > kMaxCollectiveCount) {
    return invalid(absl::StrCat("count must be in [0, ", kMaxCollectiveCount, "]; split larger buffers"));
  }
  const bool rooted = call.kind == CollectiveKind::kBroadcast || call.kind == CollectiveKind::kGather;
  if (rooted && (call.root < 0 || call.root >= size)) {
    return invalid(absl::StrCat("root must be in [0, ", size, ")"));
  }
  if (call.count > 0 && call.kind != CollectiveKind::kBarrier && data == nullptr) {
    return invalid("the data buffer is null");
  }
  if (call.count > 0 && call.kind == CollectiveKind::kGather && rank == call.root && root_recv == nullptr) {
    return invalid("the root's receive buffer is null");
  }
  return absl::OkStatus();
}

std::string DidNotArrive(const std::vector<int>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(ranks, ", "),
                      " did not arrive (dead or stuck?)");
}

absl::Status TimeoutError(int rank, const CollectiveCall& call, double timeout_seconds,
                          const std::string& diagnosis) {
  return absl::DeadlineExceededError(absl::StrFormat("rank %d: %s timed out after %g s; %s", rank,
                                                     Describe(call), timeout_seconds, diagnosis));
}

}  // namespace gantry
