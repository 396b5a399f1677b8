// Open MPI settings gantry's programs choose before MPI starts. Each changes the process
// environment, so only main() (or a program's start-up, worker/app/process_group.cc)
// calls them, before MpiCommunicator::Create.
#pragma once

namespace gantry {

// Selects Open MPI's ring algorithm for MPI_Iallreduce (coll_libnbc_iallreduce_algorithm
// = 1) unless the user set that parameter (environment or mpirun --mca). The default
// reduces to rank 0 and broadcasts back at fewer than 4 ranks or in place: every byte
// crosses twice, one way after the other; on 10 MB at 2 ranks that measured 3.6 ms
// against 1.5 ms for the ring, which matches the blocking MPI_Allreduce
// (bench/allreduce_bench.cc). Every algorithm gives every rank the same bytes
// (mpi_communicator.h), so this is a matter of speed only.
void PreferRingNonBlockingAllReduce();

}  // namespace gantry
