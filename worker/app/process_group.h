// The ranks of a gantry-worker process: MPI under mpirun, else a group of one. This is
// the program's edge: the only place that tunes the MPI environment and the only way a
// worker ends every rank of its job.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"
#include "worker/comm/mpi_communicator.h"

namespace gantry {

class ProcessGroup {
 public:
  // Joins the MPI job when launched under mpirun (MpiCommunicator::LaunchedUnderMpi),
  // else makes a group of one. UNAVAILABLE when MPI cannot start.
  static absl::StatusOr<ProcessGroup> Join(int* argc, char*** argv);

  Communicator& comm() { return mpi_ ? static_cast<Communicator&>(*mpi_) : *local_; }

  // Ends this process with `code` after flushing the log; with more than one MPI rank,
  // ends every rank of the job (MPI_Abort), since the others may be waiting on this one.
  [[noreturn]] void Exit(int code);

 private:
  std::unique_ptr<MpiCommunicator> mpi_;
  std::unique_ptr<Communicator> local_;
};

}  // namespace gantry
