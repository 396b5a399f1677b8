// The collectives the serve loop runs between jobs, so that the ranks other than rank 0
// (which alone talks to the coordinator) always know what to do next, and no rank ever
// waits without a bound.
//
// Each round of the loop every rank calls ShareCommand once: rank 0's command (idle,
// run this job, stop) reaches every rank, and a stop signal received by ANY rank turns
// the command into kStop on every rank, so the whole group leaves together.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gantry/v1/coordinator.pb.h"
#include "worker/comm/communicator.h"

namespace gantry {

struct PoolCommand {
  enum Kind : int64_t { kIdle = 0, kRunJob = 1, kStop = 2 };
  Kind kind = kIdle;
  int64_t exit_code = 0;       // kStop: the pool's exit code
  bool signalled = false;      // kStop: because a rank was asked to stop (SIGTERM/SIGINT)
  v1::AcquireJobResponse job;  // kRunJob: the job and its first shard plan
};

// `mine` is used on rank 0 only; `stopping` is this rank's own stop request. Returns
// rank 0's command (kStop when any rank is stopping) on every rank.
absl::StatusOr<PoolCommand> ShareCommand(Communicator& comm, const PoolCommand& mine, bool stopping,
                                         const CommOptions& opts);

// Every rank's host name, in rank order, on rank 0 (empty elsewhere).
absl::StatusOr<std::vector<std::string>> GatherHostNames(Communicator& comm, const CommOptions& opts);

}  // namespace gantry
