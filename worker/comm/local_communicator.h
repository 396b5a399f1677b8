// Ranks as threads of one process: the communicator that multi-rank logic is tested on.
//
// Every local collective is also a barrier: a rank leaves only once all ranks have
// arrived at the same collective. That is stricter than MPI (where a broadcast root may
// leave early), so a test catches a rank that skips a collective. Each rank's input is
// copied into the collective's shared state on arrival, so a rank that times out leaves
// nothing behind that points at its buffers.
//
// AllReduceSum adds in rank order, ((x0 + x1) + x2) + ..., on every rank: the result is
// deterministic and bit-identical on all ranks. AllReduceSumBf16 does the same with the
// bf16 pair sum (SumBf16Into: fp32 addition, one rounding per pair), so at 2 ranks it
// gives exactly the bits of the MPI version.
//
// Failures: a timeout names the ranks that had not arrived. Ranks that call different
// collectives under the same number ("rank 1 called broadcast #3 ... but rank 0 called
// all-reduce #3 ...") fail with InvalidArgument naming both. After a timeout or a
// mismatch the whole group is broken: every later collective on any rank fails at once
// with Aborted, quoting the first failure.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"

namespace gantry {

class LocalRendezvous;

class LocalGroup {
 public:
  explicit LocalGroup(int size);  // size >= 1
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  int size() const;
  // The communicator of rank r, 0 <= r < size(); each rank is handed out once. It keeps
  // the shared state alive, so it may outlive the group.
  std::unique_ptr<Communicator> Rank(int r);

 private:
  std::shared_ptr<LocalRendezvous> rendezvous_;
  std::vector<bool> handed_out_;
};

// Runs `body` on `size` threads, one per rank of a fresh LocalGroup, and returns the
// error of the lowest-numbered rank that failed (OK when none did).
absl::Status RunRanks(int size, const std::function<absl::Status(Communicator&)>& body);

}  // namespace gantry
