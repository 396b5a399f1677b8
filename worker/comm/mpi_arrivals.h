// Who reached which collective, so a timeout can name the ranks that never arrived.
//
// Each rank other than 0 sends rank 0 the number of every collective it enters, and
// rank 0 sends its own to every rank. Rank 0 therefore knows, for collective #k, every
// rank that has not reached it; any other rank knows whether rank 0 has. The messages are
// one int64 each, non-blocking, on a communicator used for nothing else (so they never
// match the collectives' own traffic): per collective rank 0 sends and receives size-1
// of them, every other rank one each way.
//
// Not thread-safe; called from the thread that owns the MpiCommunicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gantry {

class ArrivalBoard {
 public:
  // `comm` carries nothing but these messages; it is not owned and must outlive the
  // board. Posts the receives for the first announcements.
  static absl::StatusOr<std::unique_ptr<ArrivalBoard>> Create(MPI_Comm comm);
  // Cancels the posted receives. Sends still in flight are released to MPI, and their
  // buffers deliberately leaked, since MPI may still read them.
  ~ArrivalBoard();
  ArrivalBoard(const ArrivalBoard&) = delete;
  ArrivalBoard& operator=(const ArrivalBoard&) = delete;

  // Tells the peers that this rank entered collective `seq` (1, 2, 3, ... in order).
  absl::Status Announce(int64_t seq);
  // Takes in the announcements that have landed and retires completed sends. Never blocks.
  absl::Status Poll();
  // The ranks this rank knows have not announced `seq` (as of the last Poll): on rank 0
  // any rank; elsewhere only rank 0 can be named.
  std::vector<int> NotArrived(int64_t seq) const;
  // Polls until every announcement this rank expects up to `seq` has landed and all of
  // its own sends have completed (true), or until `deadline_nanos` (false). Lets MPI be
  // finalized with no message left unreceived.
  absl::StatusOr<bool> Settle(int64_t seq, int64_t deadline_nanos);

 private:
  struct Send {
    int64_t seq = 0;
    std::vector<MPI_Request> requests;
  };

  ArrivalBoard(MPI_Comm comm, int rank, int size);
  absl::Status PostReceive(size_t i);

  const MPI_Comm comm_;
  const int rank_;
  // Rank 0 hears from ranks 1..size-1, the others from rank 0 only.
  std::vector<int> peers_;
  std::vector<int64_t> receive_buffers_;  // one per peer
  std::vector<MPI_Request> receives_;     // one per peer, always posted
  std::vector<int64_t> heard_;            // by rank: the last collective it announced
  // Oldest first; a deque keeps each `seq` at a fixed address while MPI reads it.
  std::deque<Send> sends_;
};

}  // namespace gantry
