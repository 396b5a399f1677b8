// Short strings from every rank to one: host names, device names.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/comm/communicator.h"

namespace gantry {

// Every rank's `mine`, in rank order, on `root` (empty elsewhere); each cut to 127 bytes
// (the coordinator's bound on a host or device entry). The gather's error on failure.
absl::StatusOr<std::vector<std::string>> GatherStrings(Communicator& comm, const std::string& mine, int root,
                                                       const CommOptions& options);

}  // namespace gantry
