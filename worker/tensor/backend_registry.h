// Backends by name, for command-line flags (--kernels) and benchmarks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "worker/tensor/backend.h"

namespace gantry {

// "eigen": the portable reference (always built). "onednn": oneDNN kernels (built when
// CMake found oneDNN; see GANTRY_ONEDNN). Null for a name that is unknown or not built.
Backend* FindBackend(std::string_view name);

// The names FindBackend accepts in this build, fastest first.
std::vector<std::string> BuiltBackendNames();

// The backend a run uses unless told otherwise: "onednn" when built, else "eigen".
std::string_view DefaultBackendName();

}  // namespace gantry
