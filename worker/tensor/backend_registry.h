// Backends by name, for command-line flags (--kernels) and benchmarks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "worker/tensor/backend.h"

namespace gantry {

// "eigen": the portable reference (always built). "onednn": oneDNN kernels (built when
// CMake found oneDNN; see GANTRY_ONEDNN). "cuda": the CUDA backend, on device pointers
// (built with GANTRY_HAVE_CUDA; see worker/tensor/cuda/cuda_backend.h). Null for a name
// that is unknown or not built.
Backend* FindBackend(std::string_view name);

// The host-memory backends of this build, fastest first: the choices of --kernels, and
// the ones a test may hand host pointers to. ("cuda" is not among them: it takes device
// pointers and is chosen with --device.)
std::vector<std::string> BuiltBackendNames();

// The backend a run uses unless told otherwise: "onednn" when built, else "eigen".
std::string_view DefaultBackendName();

}  // namespace gantry
