// The ranks of a training-step benchmark: the MPI world when launched under mpirun (with
// the ring non-blocking all-reduce gantry-worker prefers), else one rank in this process.
#pragma once

#include <memory>

#include "worker/comm/communicator.h"
#include "worker/comm/mpi_communicator.h"

namespace gantry {

class BenchRanks {
 public:
  // Under mpirun, starts MPI (once per process) with the program's arguments.
  static BenchRanks Join(int* argc, char*** argv);

  Communicator& comm() { return mpi_ ? static_cast<Communicator&>(*mpi_) : *solo_; }

 private:
  std::unique_ptr<MpiCommunicator> mpi_;
  std::unique_ptr<Communicator> solo_;
};

}  // namespace gantry
