#include "worker/train/replica_reducer.h"

namespace gantry {

void CommReplicaReducer::Sum(float* data, int64_t count) {
  if (!status_.ok()) return;
  status_ = comm_.AllReduceSum(data, count, options_);
}

}  // namespace gantry
