#include "worker/comm/mpi_environment.h"

#include <cstdlib>

namespace gantry {

void PreferRingNonBlockingAllReduce() {
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
}

}  // namespace gantry
