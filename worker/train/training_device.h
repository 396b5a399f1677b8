// --device cpu|cuda: where a run trains, checked once when the settings resolve.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gantry {

// OK for "cpu". For "cuda", an InvalidArgument that says why the run cannot train there
// and names the fix: the build has no CUDA, or no device is visible, or (on a GPU machine
// with a CUDA build) that whole-model GPU training is not implemented yet. The CUDA
// backend's kernels and the NCCL communicator exist and are tested op by op
// (tests/gpu), but the layers, losses, optimizers, data loader and checkpoints still
// allocate and read host memory, so a run refuses --device cuda rather than pretend.
absl::Status CheckTrainingDevice(const std::string& device);

}  // namespace gantry
