// Waiting on MPI requests with a deadline (MPI's blocking calls have none), and MPI
// error codes as absl::Status. Used by MpiCommunicator and by the all-reduce benchmark,
// which times a bare MPI_Iallreduce under the same wait.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gantry {

// OK for MPI_SUCCESS; otherwise InternalError "<what> failed: <MPI's error string>".
// Needs MPI_ERRORS_RETURN on the communicator involved (MPI aborts by default).
absl::Status MpiStatus(int code, absl::string_view what);

// Polls `request` with MPI_Test until it completes (true) or the monotonic clock
// (Clock::Real) passes `deadline_nanos` (false; the request is still active).
//
// Open MPI advances non-blocking collectives only inside MPI calls (each protocol step
// of each message waits for a poll on the rank that must act), so a collective runs as
// fast as the blocking call only while its ranks poll continuously. The first 20 ms
// therefore poll back to back, which covers a 10 MB all-reduce with room to spare; with
// `yield` a poll that finds the request incomplete first offers the core to other
// threads. After that, sleeps between polls grow from 20 us to at most 1 ms (and at most
// 1/16 of the time waited so far), so a rank waiting for a stuck or much slower peer
// leaves the core to others.
//
// `background` (CommOptions::background): no busy phase; sleeps between polls grow from
// 20 us to at most 200 us, so a thread that waits beside the compute takes little CPU
// time yet polls often enough to keep a transfer moving.
absl::StatusOr<bool> WaitUntil(MPI_Request* request, int64_t deadline_nanos, bool yield, bool background = false);

// Whether to pass `yield` to WaitUntil: as Open MPI does for its own blocking calls, only
// when mpirun placed more ranks on this node than it has slots. Yielding otherwise
// invites the kernel to run some other busy process for a whole time slice (milliseconds)
// in the middle of a collective.
bool OversubscribedByMpirun();

}  // namespace gantry
