#include "worker/comm/mpi_arrivals.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "worker/comm/mpi_wait.h"

namespace gantry {
namespace {

constexpr int kArrivalTag = 17;

}  // namespace

absl::StatusOr<std::unique_ptr<ArrivalBoard>> ArrivalBoard::Create(MPI_Comm comm) {
  int rank = 0, size = 0;
  RETURN_IF_ERROR(MpiStatus(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank"));
  RETURN_IF_ERROR(MpiStatus(MPI_Comm_size(comm, &size), "MPI_Comm_size"));
  std::unique_ptr<ArrivalBoard> board(new ArrivalBoard(comm, rank, size));
  for (size_t i = 0; i < board->peers_.size(); ++i) RETURN_IF_ERROR(board->PostReceive(i));
  return board;
}

ArrivalBoard::ArrivalBoard(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), heard_(size, 0) {
  if (rank == 0) {
    for (int r = 1; r < size; ++r) peers_.push_back(r);
  } else {
    peers_.push_back(0);
  }
  receive_buffers_.assign(peers_.size(), 0);
  receives_.assign(peers_.size(), MPI_REQUEST_NULL);
}

ArrivalBoard::~ArrivalBoard() {
  for (MPI_Request& request : receives_) {
    if (request == MPI_REQUEST_NULL) continue;
    // Cancelling a receive completes locally, so this wait returns at once.
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  bool in_flight = false;
  for (Send& send : sends_) {
    for (MPI_Request& request : send.requests) {
      if (request == MPI_REQUEST_NULL) continue;
      MPI_Request_free(&request);
      in_flight = true;
    }
  }
  // Moving a container keeps its elements where they are, so MPI still reads valid memory.
  if (in_flight) static_cast<void>(new std::deque<Send>(std::move(sends_)));
}

absl::Status ArrivalBoard::PostReceive(size_t i) {
  return MpiStatus(
      MPI_Irecv(&receive_buffers_[i], 1, MPI_INT64_T, peers_[i], kArrivalTag, comm_, &receives_[i]),
      "MPI_Irecv (arrival)");
}

absl::Status ArrivalBoard::Announce(int64_t seq) {
  heard_[rank_] = seq;
  Send& send = sends_.emplace_back();
  send.seq = seq;
  send.requests.assign(peers_.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < peers_.size(); ++i) {
    RETURN_IF_ERROR(
        MpiStatus(MPI_Isend(&send.seq, 1, MPI_INT64_T, peers_[i], kArrivalTag, comm_, &send.requests[i]),
                  "MPI_Isend (arrival)"));
  }
  return absl::OkStatus();
}

absl::Status ArrivalBoard::Poll() {
  for (size_t i = 0; i < peers_.size(); ++i) {
    for (;;) {
      int done = 0;
      RETURN_IF_ERROR(MpiStatus(MPI_Test(&receives_[i], &done, MPI_STATUS_IGNORE), "MPI_Test (arrival)"));
      if (!done) break;
      const int peer = peers_[i];
      // MPI keeps messages between two ranks in order, so announcements come 1, 2, 3, ...
      if (receive_buffers_[i] != heard_[peer] + 1) {
        return absl::InternalError(absl::StrCat("rank ", rank_, ": arrival message from rank ", peer,
                                                " says #", receive_buffers_[i], ", expected #",
                                                heard_[peer] + 1));
      }
      heard_[peer] = receive_buffers_[i];
      RETURN_IF_ERROR(PostReceive(i));
    }
  }
  while (!sends_.empty()) {
    Send& oldest = sends_.front();
    int done = 0;
    RETURN_IF_ERROR(MpiStatus(MPI_Testall(static_cast<int>(oldest.requests.size()), oldest.requests.data(),
                                          &done, MPI_STATUSES_IGNORE),
                              "MPI_Testall (arrival)"));
    if (!done) break;
    sends_.pop_front();
  }
  return absl::OkStatus();
}

std::vector<int> ArrivalBoard::NotArrived(int64_t seq) const {
  std::vector<int> missing;
  for (int peer : peers_) {
    if (heard_[peer] < seq) missing.push_back(peer);
  }
  return missing;
}

absl::StatusOr<bool> ArrivalBoard::Settle(int64_t seq, int64_t deadline_nanos) {
  for (;;) {
    RETURN_IF_ERROR(Poll());
    if (sends_.empty() && NotArrived(seq).empty()) return true;
    if (Clock::Real().NowNanos() >= deadline_nanos) return false;
    std::this_thread::yield();
  }
}

}  // namespace gantry
