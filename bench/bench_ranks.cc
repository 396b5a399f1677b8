#include "bench/bench_ranks.h"

#include "worker/comm/local_communicator.h"
#include "worker/comm/mpi_environment.h"

namespace gantry {

BenchRanks BenchRanks::Join(int* argc, char*** argv) {
  BenchRanks ranks;
  if (MpiCommunicator::LaunchedUnderMpi()) {
    PreferRingNonBlockingAllReduce();
    ranks.mpi_ = std::move(*MpiCommunicator::Create(argc, argv));
  } else {
    ranks.solo_ = LocalGroup(1).Rank(0);
  }
  return ranks;
}

}  // namespace gantry
