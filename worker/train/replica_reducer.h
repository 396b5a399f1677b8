// Adapts a Communicator to the ReplicaReducer that synchronized BatchNorm uses, keeping
// layers free of any dependency on worker/comm. A failed all-reduce is recorded (the
// layer cannot return a status mid-forward) and surfaced by the step afterwards.
#pragma once

#include "absl/status/status.h"
#include "worker/comm/communicator.h"
#include "worker/layers/layer.h"

namespace gantry {

class CommReplicaReducer final : public ReplicaReducer {
 public:
  CommReplicaReducer(Communicator& comm, const CommOptions& options) : comm_(comm), options_(options) {}

  // After the first failure this does nothing: the step is lost anyway, and the caller
  // reports status().
  void Sum(float* data, int64_t count) override;
  const absl::Status& status() const { return status_; }

 private:
  Communicator& comm_;
  CommOptions options_;
  absl::Status status_;
};

}  // namespace gantry
