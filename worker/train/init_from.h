// --init-from: a run that starts from weights made elsewhere (an export of another run,
// or a PyTorch module's state_dict) instead of drawn ones.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "worker/comm/communicator.h"
#include "worker/models/gan_model.h"

namespace gantry {

// Puts the networks of the comma-separated safetensors files `files` into `model` on
// rank 0 (only rank 0 reads them; the caller then broadcasts the model). A file's
// network is the one its __metadata__ "network" names, else the one whose PyTorch keys
// it holds (worker/interop/state_dict.h). A network no file names keeps its drawn
// weights. Collective: every rank returns OK, or INVALID_ARGUMENT (rank 0: naming the
// file and what is wrong; elsewhere ABORTED); a failed agreement is returned as it came.
absl::Status InitFromFiles(Communicator& comm, const std::string& files, GanModel& model, const CommOptions& options);

}  // namespace gantry
