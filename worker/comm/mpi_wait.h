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
// Open MPI advances non-blocking collectives only inside MPI calls, so each poll also
// moves the collective on. The first 2 ms poll back to back with a yield in between, so
// that a short collective returns within microseconds. After that, sleeps between
// polls grow from 20 us to at most 1 ms and never exceed 1/16 of the time waited so far,
// which bounds the delay added to a long collective to a few percent while a stuck one
// leaves the core to others.
absl::StatusOr<bool> WaitUntil(MPI_Request* request, int64_t deadline_nanos);

}  // namespace gantry
