// The names of the engine parts a run can ask for. The spec library accepts every name
// the project has; whether a given worker was built with it (oneDNN, CUDA) or has the
// hardware is checked by that worker when the job starts.
#pragma once

#include <string>
#include <vector>

namespace gantry {

// --kernels: "onednn", "eigen" (worker/tensor/backend_registry.h has what a build holds).
const std::vector<std::string>& KernelNames();

// --device: "cpu", "cuda".
const std::vector<std::string>& DeviceNames();

}  // namespace gantry
